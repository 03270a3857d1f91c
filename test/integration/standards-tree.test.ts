/**
 * The standards sample tree (examples/standards-tree.json) against the devices the local NSO
 * simulator serves for it: each of its ten rules passes on its `-pass` device and fails on its
 * `-fail` device, with the production evaluator, on the configurations read over RESTCONF; every
 * other rule passes on both (each device deviates in one place only). The tree imports as it is
 * (the import schema, and the checks every version gets), and docs/trees.md shows each rule as
 * the tree holds it.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { gradeOf, score } from '../../functions/compliance/grading.js';
import { normalizeRule, versionProblems } from '../../functions/trees/config-checks.js';
import type { Node, Rule } from '../../functions/trees/config-model.js';
import { evaluateRules, type RuleResult } from '../../functions/trees/rules.js';
import { importBody } from '../../functions/trees/schemas.js';
import { EXPORT_FORMAT } from '../../functions/trees/version-service.js';
import { LOCAL_FLEET } from '../../tools/local/start.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { STANDARDS_RULE_IDS, standardsDeviceName, standardsDevices, type StandardsRuleId } from '../../tools/simulators/nso-standards.js';

interface TreeDocument {
  readonly format: string;
  readonly name: string;
  readonly versions: readonly { readonly name: string; readonly variables: Record<string, string>; readonly root: Node }[];
}

const TREE_FILE = `${PROJECT_ROOT}/examples/standards-tree.json`;
const tree = JSON.parse(readFileSync(TREE_FILE, 'utf8')) as TreeDocument;
const version = tree.versions[0]!;
const rules = version.root.rules;
const lab = version.root.children.find((c) => c.name === 'std-lab')!;

/**
 * Where each rule over several places fails on its `-fail` device: the concrete pointer of every
 * failing match (for `any`, every match; for `none`, the ones that hold).
 */
const FAILING_MATCHES: Partial<Record<StandardsRuleId, readonly string[]>> = {
  'vty-transport-ssh': ['/tailf-ned-cisco-ios:line/vty/1/transport/input'],
  'vty-exec-timeout': ['/tailf-ned-cisco-ios:line/vty/1/exec-timeout/minutes'],
  'snmp-no-default-community': ['/tailf-ned-cisco-ios:snmp-server/community/1/name'],
  'snmp-community-acl': ['/tailf-ned-cisco-ios:snmp-server/community/1/access-list-name'],
  'logging-host': ['/tailf-ned-cisco-ios:logging/host/ipv4/0/host'],
  'interface-description': ['/tailf-ned-cisco-ios:interface/GigabitEthernet/1/description'],
};

let sim: NsoSimulator;
const PASSWORD = 'standards-secret';

/** A device's configuration as NSO answers it (`…/device=<name>/config`). */
const configOf = async (device: string): Promise<unknown> => {
  const res = await fetch(`${sim.url}/restconf/data/tailf-ncs:devices/device=${encodeURIComponent(device)}/config`, {
    headers: { Authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, Accept: 'application/yang-data+json' },
  });
  expect(res.status, device).toBe(200);
  return ((await res.json()) as Record<string, unknown>)['tailf-ncs:config'];
};

const results = new Map<string, RuleResult[]>();

beforeAll(async () => {
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: LOCAL_FLEET });
  for (const device of lab.devices) results.set(device, evaluateRules(await configOf(device), version.variables, rules));
});
afterAll(() => sim?.close());

describe('the standards sample tree', () => {
  it('holds the ten rules, one per standard item, and every pass and fail device, which the local fleet serves', () => {
    expect(rules.map((r) => r.id)).toEqual([...STANDARDS_RULE_IDS]);
    expect(rules.every((r) => (r.description ?? '').length > 0)).toBe(true);
    expect([...lab.devices].sort()).toEqual(
      standardsDevices()
        .map((d) => d.name)
        .sort(),
    );
    expect(LOCAL_FLEET.standards).toBe(true);
  });

  it('uses every form of the rule language at least once', () => {
    const uses = (test: (r: Rule) => boolean): boolean => rules.some(test);
    expect(uses((r) => r.path.split('/').includes('*') && (r.match ?? 'all') === 'all')).toBe(true);
    expect(uses((r) => r.match === 'any')).toBe(true);
    expect(uses((r) => r.match === 'none')).toBe(true);
    expect(uses((r) => r.allowEmpty === true)).toBe(true);
    expect(uses((r) => r.pattern !== undefined)).toBe(true);
    expect(uses((r) => r.oneOf !== undefined)).toBe(true);
    expect(uses((r) => r.cidr !== undefined)).toBe(true);
    expect(uses((r) => r.range !== undefined)).toBe(true);
    expect(uses((r) => r.strict === true)).toBe(true);
  });

  it('imports as it is: the import schema takes the document', () => {
    expect(tree.format).toBe(EXPORT_FORMAT);
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(importBody);
    expect(validate(tree) ? [] : validate.errors).toEqual([]);
  });

  it('imports as it is: the rules are stored as written, and the version has no problem', () => {
    expect(rules.map(normalizeRule)).toEqual(rules);
    expect(versionProblems(version.root, version.variables)).toEqual([]);
  });

  const statusOf = (device: string, rule: string) => results.get(device)!.find((r) => r.id === rule)!.status;

  for (const rule of STANDARDS_RULE_IDS) {
    it(`${rule}: passes on ${standardsDeviceName(rule, 'pass')} and fails on ${standardsDeviceName(rule, 'fail')}`, () => {
      expect(statusOf(standardsDeviceName(rule, 'pass'), rule)).toBe('pass');
      expect(statusOf(standardsDeviceName(rule, 'fail'), rule)).toBe('fail');
      const failing = FAILING_MATCHES[rule];
      if (failing) {
        const result = results.get(standardsDeviceName(rule, 'fail'))!.find((r) => r.id === rule)!;
        expect(result.failures?.map((f) => f.at)).toEqual(failing);
        expect(result.at).toBe(failing[0]);
      }
    });
  }

  it('grades as docs/trees.md says: -pass 100, -fail 88.2 (review) for an error rule and 94.1 (pass) for a warning rule', () => {
    const graded = Object.fromEntries(
      [...results].map(([device, outcome]) => {
        const value = score(outcome.map((r) => ({ severity: r.severity, passed: r.status === 'pass' })));
        return [device, [value, gradeOf(value)]];
      }),
    );
    const severity = Object.fromEntries(rules.map((r) => [r.id, r.severity]));
    expect(graded).toEqual(
      Object.fromEntries(
        standardsDevices().map((d) => [d.name, d.outcome === 'pass' ? [100, 'pass'] : severity[d.rule] === 'error' ? [88.2, 'review'] : [94.1, 'pass']]),
      ),
    );
    const grades = Object.values(graded).map(([, grade]) => grade);
    expect({ pass: grades.filter((g) => g === 'pass').length, review: grades.filter((g) => g === 'review').length }).toEqual({ pass: 13, review: 7 });
  });

  it('fails each device on its own rule only: every other rule passes on every standards device', () => {
    const wrong = [...results].flatMap(([device, outcome]) =>
      outcome.filter((r) => r.status !== (device === `std-${r.id}-fail` ? 'fail' : 'pass')).map((r) => `${device} ${r.id} ${r.status}: ${r.message}`),
    );
    expect(wrong).toEqual([]);
  });
});

describe('docs/trees.md, "Rules from public standards"', () => {
  const page = readFileSync(`${PROJECT_ROOT}/docs/trees.md`, 'utf8');
  const section = page.slice(page.indexOf('## Rules from public standards'));
  /** The rule JSON of each table row (the last code span of the row; `\|` is a `|` inside a table). */
  const documented = section
    .slice(0, section.indexOf('\n## ', 3) === -1 ? undefined : section.indexOf('\n## ', 3))
    .split('\n')
    .filter((line) => line.startsWith('| ') && line.includes('`{'))
    .map((line) => JSON.parse(line.slice(line.lastIndexOf('`{') + 1, line.lastIndexOf('}`') + 1).replaceAll('\\|', '|')) as Rule);

  it('shows each rule of the sample tree as the tree holds it (without its description), in order', () => {
    expect(documented).toEqual(rules.map(({ description: _, ...rule }) => rule));
  });

  it('gives each rule the standard item it encodes, with a link', () => {
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && line.includes('`{'));
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(row).toMatch(/\]\(https:\/\/[^)]+\)/);
  });
});
