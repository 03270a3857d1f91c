/**
 * The rules every write of versions, nodes, rules and variables obeys beyond its JSON Schema,
 * and the limits that keep one version inside one DynamoDB item and one tree inside one Lambda
 * response. Pure: each check returns the problems it found; the core turns them into 400/409/413.
 */
import { jsonNestsDeeperThan } from '../platform/bounded-json.js';
import { encodedNameSchema, nameFromPath, namePatternSource, nameProblem, pathNameProblem } from '../platform/names.js';
import { fieldPath, type FieldPlace } from '../platform/problem.js';
import { MAX_PATTERN_LENGTH } from '../platform/re2.js';
import { ROOT_NODE, type JsonValue, type Node, type Rule } from './config-model.js';
import { hasPredicate } from './predicates.js';
import { WILDCARD } from './rule-matches.js';
import { parsePointer, rulePredicates, VARIABLE_NAME_PATTERN_SOURCE, variablesOf } from './rules.js';
import { selectListProblems } from './selectors.js';

/**
 * The limits of a version and a tree, each in the unit of what it protects:
 *
 * - a version's `{ variables, root }` is stored as UTF-8 JSON text in one DynamoDB item (400 KB
 *   at most, attribute names and the other attributes included): `versionBytes` counts those
 *   stored bytes;
 * - a whole tree travels as one export answer and one import request. Lambda takes and gives at
 *   most 6 MiB, and the proxy integration carries the body inside a JSON string, so every `"`
 *   and `\` of the document is escaped again and a control character (already `\u0001` in the
 *   document) grows once more: `treeTransportBytes` counts the export document *as escaped
 *   for transport* ({@link transportBytes}), with room to spare under 6 MiB for the event's
 *   headers and request context.
 */
export const CONFIG_LIMITS = {
  /** Nodes of one version, `base` included. */
  nodesPerVersion: 200,
  /** Levels of a node path: `base/a/b/c/d/e/f/g` is 8. */
  nodeDepth: 8,
  rulesPerNode: 100,
  ruleId: 128,
  rulePath: 1024,
  ruleDescription: 1024,
  /** One rule's `value` as JSON text. */
  ruleValueBytes: 16 * 1024,
  /**
   * Levels one rule's `value` nests (`{}` and `[]` are level 1). With the wrapping of an export
   * document around a rule of a node 8 levels down (20 levels), a tree stays within the 128
   * levels an import request may nest: whatever is stored can be imported again.
   */
  ruleValueDepth: 64,
  /** Values one rule's `oneOf` lists (together at most `ruleValueBytes` as JSON). */
  ruleOneOf: 100,
  /** Prefixes one rule's `cidr` lists. */
  ruleCidr: 100,
  /** Characters of one rule's `pattern` (RE2 syntax). */
  rulePattern: MAX_PATTERN_LENGTH,
  /** Characters of one `cidr` entry or `range` bound written as text (room for a `{{variable}}`). */
  rulePredicateText: 128,
  devicesPerNode: 1000,
  deviceName: 253,
  variables: 200,
  variableValue: 1024,
  /** One version's stored content (`{ variables, root }` as UTF-8 JSON text). */
  versionBytes: 350_000,
  /** The tree's export document as transported (escaped once more; see {@link transportBytes}). */
  treeTransportBytes: 6_000_000,
} as const;

/**
 * The bytes `json` (a JSON text) takes as the body of a Lambda proxy answer or of an API Gateway
 * event: escaped as a JSON string (`"` and `\` doubled, control characters as `\u00XX`), in
 * UTF-8 (Lambda's runtime leaves other characters unescaped), without the enclosing quotes.
 */
export const transportBytes = (json: string): number => Buffer.byteLength(JSON.stringify(json), 'utf8') - 2;

/** Variable names as `{{name}}` can name them (see rules.ts). As JSON Schema pattern source, and compiled. */
export { VARIABLE_NAME_PATTERN_SOURCE };
const VARIABLE_NAME = new RegExp(VARIABLE_NAME_PATTERN_SOURCE);

/** Rule ids: 1 to 128 letters, digits and `_ . : -`. */
export const RULE_ID_PATTERN_SOURCE = '^[A-Za-z0-9_.:-]{1,128}$';
const RULE_ID = new RegExp(RULE_ID_PATTERN_SOURCE);

/** Device names: the rule for every stored name (names.ts), and no `/`. */
export const DEVICE_NAME_PATTERN_SOURCE = namePatternSource('/');
const DEVICE_NAME = new RegExp(DEVICE_NAME_PATTERN_SOURCE, 'u');
const DEVICE_RULE = `must be 1 to ${CONFIG_LIMITS.deviceName} characters, no "/"`;

/** Why `device` cannot be a device name of a node or a batch; `undefined` when it can. */
export const deviceNameProblem = (device: string): string | undefined =>
  nameProblem(device) ?? (codePoints(device) > CONFIG_LIMITS.deviceName || !DEVICE_NAME.test(device) ? DEVICE_RULE : undefined);

/** A device name from a path parameter (decoded; a 400 naming `field` when it is no device name). */
export const deviceFromPath = (raw: string, field = 'device'): string => nameFromPath(raw, field, deviceNameProblem);

/** The schema of a path parameter holding a device name (checked again, decoded, by {@link deviceFromPath}). */
export const DEVICE_PATH_SCHEMA = encodedNameSchema(CONFIG_LIMITS.deviceName, 'The device name');

/** One problem of a write: where (a {@link fieldPath} in the body) and what. */
export interface ConfigProblem {
  readonly field: string;
  readonly message: string;
  /** `limit`: past a stated limit (413); `conflict`: clashes with stored state (409); else 400. */
  readonly kind?: 'limit' | 'conflict';
}

/** Length in characters (code points), as JSON Schema's `maxLength` counts it. */
const codePoints = (text: string): number => [...text].length;

export const utf8Bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** The problems of a node name (for the root: it must be `base`). */
export const nodeNameProblem = (name: string): string | undefined => {
  const problem = pathNameProblem(name);
  return problem && `node name ${problem}`;
};

/**
 * The problems of one node's own rules against the version's variables, and of its device
 * names. `at` is the node's place (`rules.3.path` is then under it).
 */
export const nodeContentProblems = (
  node: Pick<Node, 'devices' | 'rules' | 'select'>,
  variables: Readonly<Record<string, string>>,
  at: FieldPlace = [],
): ConfigProblem[] => {
  const out: ConfigProblem[] = [];
  if (node.rules.length > CONFIG_LIMITS.rulesPerNode)
    out.push({ field: fieldPath(...at, 'rules'), message: `has more than ${CONFIG_LIMITS.rulesPerNode} rules`, kind: 'limit' });
  if (node.devices.length > CONFIG_LIMITS.devicesPerNode)
    out.push({ field: fieldPath(...at, 'devices'), message: `has more than ${CONFIG_LIMITS.devicesPerNode} devices`, kind: 'limit' });
  const seenDevices = new Set<string>();
  node.devices.forEach((device, i) => {
    const problem = deviceNameProblem(device);
    if (problem) out.push({ field: fieldPath(...at, 'devices', i), message: problem });
    else if (seenDevices.has(device)) out.push({ field: fieldPath(...at, 'devices', i), message: `lists ${JSON.stringify(device)} twice` });
    seenDevices.add(device);
  });
  if (node.select) out.push(...selectListProblems(node.select, [...at, 'select']));
  const seenIds = new Set<string>();
  node.rules.forEach((rule, i) => {
    const place = (member: string): string => fieldPath(...at, 'rules', i, member);
    if (!RULE_ID.test(rule.id)) out.push({ field: place('id'), message: 'must be 1 to 128 letters, digits, "_", ".", ":" or "-"' });
    else if (seenIds.has(rule.id)) out.push({ field: place('id'), message: `repeats the rule id ${JSON.stringify(rule.id)} of this node` });
    seenIds.add(rule.id);
    if (codePoints(rule.path) > CONFIG_LIMITS.rulePath || parsePointer(rule.path) === undefined) {
      out.push({
        field: place('path'),
        message: `must be a JSON Pointer (RFC 6901: "" or "/a/b", "~0" for "~", "~1" for "/") of at most ${CONFIG_LIMITS.rulePath} characters`,
      });
    }
    if (rule.mode === 'exact' && rule.value === undefined && !hasPredicate(rule))
      out.push({ field: place('value'), message: 'is required for an exact rule without a predicate' });
    if (rule.ordered !== undefined && rule.mode !== 'exact') out.push({ field: place('ordered'), message: 'applies to exact rules only' });
    if (rule.value !== undefined) out.push(...jsonValueProblems(rule.value, variables, place('value')));
    out.push(...ruleFormProblems(rule, variables, (...member) => fieldPath(...at, 'rules', i, ...member)));
  });
  return out;
};

/** The problems of a JSON value a rule carries (`value`, `oneOf`): its size, depth and variables. */
const jsonValueProblems = (value: JsonValue, variables: Readonly<Record<string, string>>, field: string): ConfigProblem[] => {
  const out: ConfigProblem[] = [];
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text, 'utf8') > CONFIG_LIMITS.ruleValueBytes)
    out.push({ field, message: `is larger than ${CONFIG_LIMITS.ruleValueBytes} bytes as JSON`, kind: 'limit' });
  if (jsonNestsDeeperThan(text, CONFIG_LIMITS.ruleValueDepth)) out.push({ field, message: `nests deeper than ${CONFIG_LIMITS.ruleValueDepth} levels` });
  out.push(...unknownVariableProblems(value, variables, field));
  return out;
};

const unknownVariableProblems = (value: JsonValue, variables: Readonly<Record<string, string>>, field: string): ConfigProblem[] =>
  variablesOf(value)
    .filter((name) => !Object.hasOwn(variables, name))
    .map((name) => ({ field, message: `names the variable ${JSON.stringify(name)}, which the version does not define` }));

/**
 * The problems of the rule language's members: `match` and `allowEmpty` only over several
 * places, `strict` only on a required array value and without predicates, and predicates
 * that work with the version's variables (a pattern RE2 compiles, `cidr` prefixes, `range`
 * bounds that are numbers with the minimum not above the maximum).
 */
const ruleFormProblems = (rule: Rule, variables: Readonly<Record<string, string>>, place: (...member: FieldPlace) => string): ConfigProblem[] => {
  const out: ConfigProblem[] = [];
  const predicate = hasPredicate(rule);
  const wildcard = parsePointer(rule.path)?.includes(WILDCARD) === true;
  for (const member of ['match', 'allowEmpty'] as const) {
    if (rule[member] !== undefined && !wildcard && !predicate)
      out.push({ field: place(member), message: 'applies only to a path with a "*" segment or a rule with a predicate (pattern, oneOf, cidr, range)' });
  }
  if (rule.strict !== undefined) {
    if (rule.mode !== 'required' || !Array.isArray(rule.value))
      out.push({ field: place('strict'), message: 'applies only to a required rule whose value is an array' });
    else if (predicate)
      out.push({
        field: place('strict'),
        message: 'cannot be combined with a predicate: a predicate tests the elements one by one, strict the list as a whole',
      });
  }
  if (rule.oneOf !== undefined) {
    if (rule.oneOf.length > CONFIG_LIMITS.ruleOneOf)
      out.push({ field: place('oneOf'), message: `lists more than ${CONFIG_LIMITS.ruleOneOf} values`, kind: 'limit' });
    out.push(...jsonValueProblems(rule.oneOf, variables, place('oneOf')));
  }
  if (rule.cidr !== undefined && rule.cidr.length > CONFIG_LIMITS.ruleCidr)
    out.push({ field: place('cidr'), message: `lists more than ${CONFIG_LIMITS.ruleCidr} prefixes`, kind: 'limit' });
  const unknown = (['pattern', 'cidr', 'range'] as const).flatMap((field) =>
    rule[field] === undefined ? [] : unknownVariableProblems(rule[field] as JsonValue, variables, place(field)),
  );
  out.push(...unknown);
  if (unknown.length || out.some((p) => p.field === place('oneOf'))) return out;
  const prepared = rulePredicates(rule, variables);
  if ('problems' in prepared) for (const { place: at, problem } of prepared.problems) out.push({ field: place(...at), message: problem });
  return out;
};

/** The problems of a version's variables. */
export const variablesProblems = (variables: Readonly<Record<string, string>>, at: FieldPlace = ['variables']): ConfigProblem[] => {
  const out: ConfigProblem[] = [];
  const field = fieldPath(...at);
  const names = Object.keys(variables);
  if (names.length > CONFIG_LIMITS.variables) out.push({ field, message: `has more than ${CONFIG_LIMITS.variables} variables`, kind: 'limit' });
  for (const name of names) {
    if (!VARIABLE_NAME.test(name)) out.push({ field: fieldPath(...at, name), message: 'variable names are 1 to 64 letters, digits, "_", "." or "-"' });
    const value = variables[name];
    if (typeof value !== 'string') out.push({ field: fieldPath(...at, name), message: 'must be a string' });
    else if (codePoints(value) > CONFIG_LIMITS.variableValue)
      out.push({ field: fieldPath(...at, name), message: `is longer than ${CONFIG_LIMITS.variableValue} characters`, kind: 'limit' });
  }
  return out;
};

/**
 * Every problem of a whole version: the root's name, node names (unique among siblings),
 * depth and count, each node's content, rule ids unique along every root-to-node path, each
 * device on one node at most, and the stored size. Used for imports and seeds, and after
 * every change a write makes, so that no write can leave a version that breaks a rule.
 * `at` is the version's place (`versions.2`).
 */
export const versionProblems = (root: Node, variables: Readonly<Record<string, string>>, at: FieldPlace = []): ConfigProblem[] => {
  const out: ConfigProblem[] = [...variablesProblems(variables, [...at, 'variables'])];
  if (root.name !== ROOT_NODE) out.push({ field: fieldPath(...at, 'root', 'name'), message: `must be "${ROOT_NODE}"` });
  const deviceAt = new Map<string, string>();
  let count = 0;
  const visit = (node: Node, path: string, place: FieldPlace, depth: number, inheritedIds: ReadonlyMap<string, string>): void => {
    count++;
    if (depth > CONFIG_LIMITS.nodeDepth) {
      out.push({ field: fieldPath(...place, 'name'), message: `${path} is deeper than ${CONFIG_LIMITS.nodeDepth} levels`, kind: 'limit' });
      return;
    }
    if (depth > 1) {
      const problem = nodeNameProblem(node.name);
      if (problem) out.push({ field: fieldPath(...place, 'name'), message: problem });
    }
    out.push(...nodeContentProblems(node, variables, place));
    node.devices.forEach((device, i) => {
      const other = deviceAt.get(device);
      if (other !== undefined && other !== path)
        out.push({ field: fieldPath(...place, 'devices', i), message: `${JSON.stringify(device)} is already on node ${other}`, kind: 'conflict' });
      else deviceAt.set(device, path);
    });
    const ids = new Map(inheritedIds);
    node.rules.forEach((rule, i) => {
      const owner = inheritedIds.get(rule.id);
      if (owner !== undefined)
        out.push({
          field: fieldPath(...place, 'rules', i, 'id'),
          message: `repeats the id ${JSON.stringify(rule.id)} of a rule on ${owner}, which this node inherits`,
        });
      ids.set(rule.id, path);
    });
    const siblings = new Set<string>();
    node.children.forEach((child, i) => {
      if (siblings.has(child.name))
        out.push({ field: fieldPath(...place, 'children', i, 'name'), message: `repeats the name ${JSON.stringify(child.name)} of a sibling` });
      siblings.add(child.name);
      visit(child, `${path}/${child.name}`, [...place, 'children', i], depth + 1, ids);
    });
  };
  visit(root, root.name, [...at, 'root'], 1, new Map());
  if (count > CONFIG_LIMITS.nodesPerVersion)
    out.push({ field: fieldPath(...at, 'root'), message: `has more than ${CONFIG_LIMITS.nodesPerVersion} nodes`, kind: 'limit' });
  const bytes = utf8Bytes({ variables, root });
  if (bytes > CONFIG_LIMITS.versionBytes)
    out.push({
      field: fieldPath(...at, 'root'),
      message: `is ${bytes} bytes as JSON, more than the ${CONFIG_LIMITS.versionBytes} a version may hold`,
      kind: 'limit',
    });
  return out;
};

/** Rules as stored: only the known members, in a fixed order. */
export const normalizeRule = (rule: Rule): Rule => ({
  id: rule.id,
  path: rule.path,
  mode: rule.mode,
  severity: rule.severity,
  ...(rule.value !== undefined ? { value: rule.value } : {}),
  ...(rule.ordered !== undefined ? { ordered: rule.ordered } : {}),
  ...(rule.description !== undefined ? { description: rule.description } : {}),
  ...(rule.match !== undefined ? { match: rule.match } : {}),
  ...(rule.allowEmpty !== undefined ? { allowEmpty: rule.allowEmpty } : {}),
  ...(rule.pattern !== undefined ? { pattern: rule.pattern } : {}),
  ...(rule.oneOf !== undefined ? { oneOf: rule.oneOf } : {}),
  ...(rule.cidr !== undefined ? { cidr: rule.cidr } : {}),
  ...(rule.range !== undefined
    ? { range: { ...(rule.range.min !== undefined ? { min: rule.range.min } : {}), ...(rule.range.max !== undefined ? { max: rule.range.max } : {}) } }
    : {}),
  ...(rule.strict !== undefined ? { strict: rule.strict } : {}),
});
