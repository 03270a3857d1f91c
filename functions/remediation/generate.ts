/**
 * Remediation generation: for each failing rule of one device, the YANG Patch edits that make
 * it pass, worked out from the rules, the version's variables and the device's configuration.
 * Pure: no I/O, no clock. docs/compliance.md ("Remediation: how fixes are generated") says the
 * same with examples.
 *
 * - `required` merges the expected value at the rule's path (a list's entries one by one, by key).
 * - `exact` replaces the node with the expected value (a list: its entries by key, and the
 *   entries the value lacks removed).
 * - `disallowed` removes what is there: the node, or the parts of it that hold the value.
 * - A rule over several places (`*`, `match`, a predicate) gets that edit at every failing
 *   match (`none`: the negated mode's); a predicate is remediated only by removal, `strict`
 *   also removes the extra entries, and an exempted rule gets no edit.
 *
 * Each rule's edits are checked by applying them ({@link applyEdits}) and evaluating the rule
 * again with the evaluator itself; all rules' edits together are checked the same way against
 * every rule of the device, and rules whose edits undo each other (or break a rule that passed)
 * are reported as conflicting instead of sent. A rule nothing can be generated for says why.
 */
import type { Rule } from '../trees/config-model.js';
import type { JsonValue } from '../trees/config-model.js';
import type { FrozenExemption } from '../exemptions/model.js';
import { hasPredicate, PREDICATE_FIELDS } from '../trees/predicates.js';
import { expandPlaces, judge, WILDCARD } from '../trees/rule-matches.js';
import { ARRAY_INDEX, canonical, contains, evaluateRule, evaluateRules, formatPointer, parsePointer, type RuleResult, ruleValue } from '../trees/rules.js';
import {
  applyEdits,
  type EditOperation,
  entryKeys,
  formatTarget,
  type ListKeys,
  NODE_NAME,
  PatchError,
  type Step,
  type YangPatch,
  type YangPatchEdit,
} from './patch.js';

/** A rule as a batch plan holds it (with its node) or as a version holds it. */
export type RemediatedRule = Rule & { readonly node?: string };

export interface RemediationInput {
  readonly device: string;
  /** The device's configuration: the object inside `tailf-ncs:config`, as fetched now. */
  readonly config: unknown;
  /** Every rule the device is checked against, in inheritance order. */
  readonly rules: readonly RemediatedRule[];
  readonly variables: Readonly<Record<string, string>>;
  readonly listKeys: ListKeys;
  /** Only these rules are remediated (all failing rules when absent); every rule is still checked. */
  readonly ruleIds?: ReadonlySet<string>;
  /** The patch's `patch-id`; `remediation-<device>` when absent. */
  readonly patchId?: string;
  /**
   * The rules an exemption holds for on the device, by rule id: nothing is generated for them
   * (each failing one is reported with its exemption); they are still checked not to break.
   */
  readonly exemptions?: ReadonlyMap<string, RuleExemption>;
}

/** The exemption a rule is not remediated for. */
export type RuleExemption = Pick<FrozenExemption, 'exemptionId' | 'until'>;

/**
 * A failing rule's remediation: the ids of its edits in the patch, why there are none, or the
 * exemption that holds for it (no edit is generated for an exempted rule).
 */
export type RuleRemediation =
  | { readonly ruleId: string; readonly node?: string; readonly edits: readonly string[] }
  | { readonly ruleId: string; readonly node?: string; readonly unremediable: string; readonly conflictsWith?: readonly string[] }
  | { readonly ruleId: string; readonly node?: string; readonly exempted: RuleExemption };

/** One device's remediation: one transaction (absent when nothing is to be sent), and one entry per failing rule. */
export interface DeviceRemediation {
  readonly device: string;
  readonly patch?: YangPatch;
  readonly rules: readonly RuleRemediation[];
}

/** An edit before it has an id, with the JSON Pointer (tokens) of the place it changes. */
interface Edit {
  readonly operation: Extract<EditOperation, 'merge' | 'replace' | 'remove'>;
  readonly steps: readonly Step[];
  readonly value?: JsonValue;
  readonly at: readonly string[];
}

type Planned = { readonly edits: readonly Edit[] } | { readonly unremediable: string };

type JsonObject = { readonly [member: string]: JsonValue };
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Where a rule's path leads in the configuration, as target steps. */
interface Address {
  readonly tokens: readonly string[];
  readonly steps: readonly Step[];
  /** The schema path of the node (member names, no positions). */
  readonly schema: readonly string[];
  readonly actual: JsonValue | undefined;
  /** Set when the path ends at a list entry: the list's key names. */
  readonly entry?: readonly string[];
}

/**
 * The steps of `tokens` in `config`, or why they cannot be a RESTCONF target. A leaf-list value
 * named by its position is a target only to be removed (`removal`), and only as the last step:
 * RFC 8040 names it by its value (`…/server=10.0.0.1`).
 */
const address = (config: unknown, tokens: readonly string[], lists: ListKeys, removal = false): Address | string => {
  const steps: Step[] = [];
  const schema: string[] = [];
  let current: unknown = config;
  let entry: readonly string[] | undefined;
  for (const [i, token] of tokens.entries()) {
    const here = formatPointer(tokens.slice(0, i + 1));
    if (Array.isArray(current)) {
      const element: unknown = ARRAY_INDEX.test(token) ? current[Number(token)] : undefined;
      if (element === undefined) return `${here} is no entry of the list`;
      if (!isObject(element)) {
        const value = entryKeys(element as JsonValue, undefined);
        if (!removal || !value) return `${here} names a leaf-list value by its position, which a target cannot`;
        // A step below it finds a value, not a container, and says so.
        steps.push({ name: (steps.pop() as Step).name, keys: value });
        entry = undefined;
        current = element;
        continue;
      }
      const names = lists(schema);
      if (!names) return `the keys of the list ${schema.join('/')} are not known`;
      const keys = entryKeys(element, names);
      if (!keys) return `the entry ${here} has no value for a key of ${schema.join('/')} (${names.join(', ')})`;
      steps.push({ name: (steps.pop() as Step).name, keys });
      entry = names;
      current = element;
      continue;
    }
    if (entry?.includes(token)) return `${here} is the key ${token} of its list entry, which names the entry and cannot be changed`;
    entry = undefined;
    if (current !== undefined && !isObject(current)) return `${formatPointer(tokens.slice(0, i))} is a value, not a container`;
    // Mutation: `current === undefined` → `true` survives: a defined `current` is an object here,
    // and a position is no YANG name, so the path is refused either way (with the other reason).
    if (current === undefined && ARRAY_INDEX.test(token)) return `${here} names a list entry, and the configuration has no list there`;
    if (!NODE_NAME.test(token)) return `${JSON.stringify(token)} is not a YANG node name`;
    if (i === 0 && !token.includes(':')) return `${JSON.stringify(token)} is a top-level member without its module (RFC 7951 names it module:name)`;
    steps.push({ name: token });
    schema.push(token);
    current = isObject(current) && Object.hasOwn(current, token) ? current[token] : undefined;
  }
  return { tokens, steps, schema, actual: current as JsonValue | undefined, ...(entry ? { entry } : {}) };
};

/** Why `value` cannot be written at `schema` (lists need their keys, RFC 7951 has no empty list), or `undefined`. */
const unwritable = (value: JsonValue, schema: readonly string[], lists: ListKeys): string | undefined => {
  if (Array.isArray(value)) {
    const where = schema.join('/');
    if (value.length === 0) return `${where}: an empty list cannot be written`;
    if (value.every(isScalar)) {
      // Mutation: `canonical(v, false)` → `true` is equivalent: the order only matters inside arrays and objects.
      return new Set(value.map((v) => canonical(v, false))).size === value.length ? undefined : `${where}: a leaf-list holds each value once`;
    }
    if (!value.every(isObject)) return `${where}: a list's entries are all objects or all values`;
    const names = lists(schema);
    if (!names) return `the keys of the list ${where} are not known`;
    const seen = new Set<string>();
    for (const element of value) {
      const keys = entryKeys(element, names);
      if (!keys) return `an entry of ${where} has no value for a key (${names.join(', ')})`;
      const id = JSON.stringify(keys);
      if (seen.has(id)) return `two entries of ${where} have the same key ${keys.join(',')}`;
      seen.add(id);
      const inner = unwritable(element, schema, lists);
      if (inner) return inner;
    }
    return undefined;
  }
  if (!isObject(value)) return undefined;
  for (const [name, member] of Object.entries(value)) {
    if (!NODE_NAME.test(name)) return `${JSON.stringify(name)} is not a YANG node name`;
    const inner = unwritable(member, [...schema, name], lists);
    if (inner) return inner;
  }
  return undefined;
};

/** The steps of the entry of the list at `steps` whose keys are `keys`. */
const entryStep = (steps: readonly Step[], keys: readonly string[]): Step[] => [...steps.slice(0, -1), { name: (steps.at(-1) as Step).name, keys }];

/** The list `schema` holds `elements` of: its key names, `undefined` for a leaf-list. */
const listNames = (schema: readonly string[], elements: readonly JsonValue[], lists: ListKeys): readonly string[] | undefined =>
  // Mutation: `some` → `every` is equivalent: values are checked to be all objects or all
  // scalars before (unwritable), and a configuration NSO sends never mixes them.
  elements.some(isObject) ? lists(schema) : undefined;

/** One edit per element of a list value, each at its entry. */
const entryEdits = (operation: Edit['operation'], where: Address, elements: readonly JsonValue[], names: readonly string[] | undefined): Edit[] =>
  elements.map((element) => ({
    operation,
    steps: entryStep(where.steps, entryKeys(element, names) as string[]),
    ...(operation === 'remove' ? {} : { value: [element] }),
    at: where.tokens,
  }));

/**
 * The edits of a `required` rule, expecting `expected`. With `strict`, the list also loses each
 * entry that contains none of the expected ones, unless a merge rewrites that entry anyway
 * (an expected entry with its key is missing: merged into it, the entry then contains it).
 */
const planRequired = (where: Address, expected: JsonValue | undefined, strict: boolean, lists: ListKeys): Planned => {
  if (expected === undefined) return { unremediable: 'a required rule without a value asks only that the path exists: there is nothing to write' };
  if (Array.isArray(expected)) {
    // planAt refuses a list value at a list entry before: `where` is no entry here.
    if (where.actual !== undefined && !Array.isArray(where.actual)) return { unremediable: `${formatPointer(where.tokens)} is not a list` };
    const names = listNames(where.schema, expected, lists);
    const missing = expected.filter((element) => !contains(where.actual, [element]));
    const merges = entryEdits('merge', where, missing, names);
    if (!strict) return { edits: merges };
    const rewritten = new Set(missing.map((element) => JSON.stringify(entryKeys(element, names))));
    const extra = ((where.actual ?? []) as readonly JsonValue[]).filter(
      (element) => !expected.some((e) => contains(element, e)) && !rewritten.has(JSON.stringify(entryKeys(element, names))),
    );
    const removals = removeEntries(where, extra, lists);
    return 'unremediable' in removals ? removals : { edits: [...removals.edits, ...merges] };
  }
  return { edits: [{ operation: 'merge', steps: where.steps, value: where.entry ? [withKeys(where, expected as JsonObject)] : expected, at: where.tokens }] };
};

/** `value` for the list entry at `where`, with the entry's keys first: a YANG Patch entry carries its keys. */
const withKeys = (where: Address, value: JsonObject): JsonObject =>
  Object.fromEntries([...(where.entry as readonly string[]).map((name) => [name, (where.actual as JsonObject)[name]]), ...Object.entries(value)]);

/** The edits of an `exact` rule. */
const planExact = (where: Address, expected: JsonValue, lists: ListKeys): Planned => {
  if (!Array.isArray(expected)) return { edits: [{ operation: 'replace', steps: where.steps, value: where.entry ? [expected] : expected, at: where.tokens }] };
  if (where.actual !== undefined && !Array.isArray(where.actual)) return { unremediable: `${formatPointer(where.tokens)} is not a list` };
  const actual = (where.actual ?? []) as readonly JsonValue[];
  const names = listNames(where.schema, expected, lists);
  if (!actual.every((element) => entryKeys(element, names)))
    return { unremediable: `the entries at ${formatPointer(where.tokens)} are not of the kind the rule expects` };
  const wanted = new Set(expected.map((element) => JSON.stringify(entryKeys(element, names))));
  const present = new Set(actual.map((element) => canonical(element, false)));
  return {
    edits: [
      ...entryEdits(
        'remove',
        where,
        actual.filter((element) => !wanted.has(JSON.stringify(entryKeys(element, names)))),
        names,
      ),
      ...entryEdits(
        'replace',
        where,
        expected.filter((element) => !present.has(canonical(element, false))),
        names,
      ),
    ],
  };
};

/** The edits that remove the node at `where`: a list's entries one by one. */
const removeNode = (where: Address, lists: ListKeys): Planned => {
  if (!Array.isArray(where.actual)) return { edits: [{ operation: 'remove', steps: where.steps, at: where.tokens }] };
  return removeEntries(where, where.actual, lists);
};

const removeEntries = (where: Address, elements: readonly JsonValue[], lists: ListKeys): Planned => {
  const names = listNames(where.schema, elements, lists);
  if (!elements.every((element) => entryKeys(element, names))) return { unremediable: `the entries at ${formatPointer(where.tokens)} cannot be named by key` };
  return { edits: entryEdits('remove', where, elements, names) };
};

/**
 * The edits that make the node at `where` stop containing `expected`: a value, an empty object
 * or list, or a list entry the value names a key of, is removed whole; an object loses each
 * member the value holds; a list loses each entry that holds one of the value's entries.
 */
const planDisallowed = (where: Address, expected: JsonValue, lists: ListKeys): Planned => {
  const touchesKey = where.entry !== undefined && isObject(expected) && where.entry.some((name) => Object.hasOwn(expected, name));
  if (isScalar(expected) || (isObject(expected) ? Object.keys(expected).length === 0 : (expected as readonly JsonValue[]).length === 0) || touchesKey)
    return removeNode(where, lists);
  if (Array.isArray(expected)) {
    const actual = where.actual as readonly JsonValue[];
    return removeEntries(
      where,
      actual.filter((element) => expected.some((e) => contains(element, e))),
      lists,
    );
  }
  const edits: Edit[] = [];
  for (const [name, member] of Object.entries(expected as JsonObject)) {
    if (!NODE_NAME.test(name)) return { unremediable: `${JSON.stringify(name)} is not a YANG node name` };
    const below: Address = {
      tokens: [...where.tokens, name],
      steps: [...where.steps, { name }],
      schema: [...where.schema, name],
      actual: (where.actual as JsonObject)[name],
    };
    const planned = planDisallowed(below, member, lists);
    if ('unremediable' in planned) return planned;
    edits.push(...planned.edits);
  }
  return { edits };
};

/** What a rule asks of each place it remediates: the mode whose edit is made there, and the rule's own parts. */
interface Ask {
  readonly mode: Rule['mode'];
  readonly expected: JsonValue | undefined;
  /** The rule's predicate members (`pattern`, `oneOf`, `cidr`, `range`) that it has. */
  readonly predicates: readonly string[];
  readonly strict: boolean;
  readonly ordered: boolean;
}

/** The edits that make the one place `tokens` hold what `ask` asks, or why there are none. */
const planAt = (ask: Ask, tokens: readonly string[], config: unknown, lists: ListKeys): Planned => {
  const { mode, expected, predicates } = ask;
  const here = formatPointer(tokens);
  if (predicates.length && mode !== 'disallowed')
    return { unremediable: `the rule's ${predicates.join(', ')} says what the value at ${here} may be, not which value to write` };
  const where = address(config, tokens, lists, mode === 'disallowed');
  if (typeof where === 'string') return { unremediable: where };
  if (mode === 'disallowed') {
    if (where.tokens.length === 0 && expected === undefined) return { unremediable: 'the whole configuration always exists' };
    // A predicate judges the whole value there: the value goes (a leaf, a leaf-list value, an entry).
    return expected === undefined || predicates.length ? removeNode(where, lists) : planDisallowed(where, expected, lists);
  }
  if (expected !== undefined) {
    if (where.tokens.length === 0 && !isObject(expected)) return { unremediable: 'the whole configuration is an object' };
    const reason = where.entry && !isObject(expected) ? `${here} is a list entry and the value is not an object` : unwritable(expected, where.schema, lists);
    if (reason) return { unremediable: reason };
    if (where.entry && isObject(expected) && where.entry.some((name) => Object.hasOwn(expected, name) && expected[name] !== (where.actual as JsonObject)[name]))
      return { unremediable: `the value changes a key of the list entry ${here}, which names the entry` };
    if (where.entry && mode === 'exact' && !where.entry.every((name) => Object.hasOwn(expected as JsonObject, name)))
      return { unremediable: `an exact value for the list entry ${here} must hold its keys (${where.entry.join(', ')})` };
  }
  if (mode === 'required') return planRequired(where, expected, ask.strict, lists);
  if (ask.ordered && hasLongArray(expected)) return { unremediable: 'the rule compares arrays in order, and NSO orders the entries of its lists itself' };
  return planExact(where, expected as JsonValue, lists);
};

/**
 * The mode whose edit makes a match of a `none` rule stop holding: a `required` or `exact`
 * match holds what the rule names, which goes as a `disallowed` rule's would; a `disallowed`
 * match lacks it, which is written as a `required` rule's would.
 */
const NEGATED: Readonly<Record<Rule['mode'], Rule['mode']>> = { required: 'disallowed', exact: 'disallowed', disallowed: 'required' };

/** Whether the evaluator judges the rule over several places (as `evaluateRule` decides). */
const overPlaces = (rule: Rule, tokens: readonly string[]): boolean =>
  tokens.includes(WILDCARD) || hasPredicate(rule) || rule.match !== undefined || rule.allowEmpty !== undefined;

/** Whether `value` (one match's) holds: the rule judged at that one place by the evaluator. */
const holds = (rule: Rule, value: JsonValue | undefined, variables: Readonly<Record<string, string>>): boolean =>
  evaluateRule(value, variables, { ...rule, path: '', match: undefined, allowEmpty: undefined }).status === 'pass';

/**
 * The edits of a rule over several places: the rule's own edit at each match that does not
 * hold (`all`, or `any` with a single match), the edit of the negated mode at each match that
 * holds (`none`). Every match, not only those a report lists.
 */
const planPlaces = (
  rule: Rule,
  ask: Ask,
  tokens: readonly string[],
  config: unknown,
  variables: Readonly<Record<string, string>>,
  lists: ListKeys,
): Planned => {
  const match = rule.match ?? 'all';
  const places = expandPlaces(config, tokens, ask.predicates.length > 0).map((place) => ({ ...place, holds: holds(rule, place.value, variables) }));
  if (places.length === 0) return { unremediable: `nothing matches ${rule.path}: there is nothing to apply the rule to` };
  if (match === 'any' && places.length > 1)
    return { unremediable: `none of the ${places.length} matches of ${rule.path} holds, and match "any" does not say which of them to change` };
  const { failing } = judge(places, match, rule.mode, rule.allowEmpty === true);
  const at: Ask = match === 'none' ? { ...ask, mode: NEGATED[rule.mode] } : ask;
  const edits: Edit[] = [];
  for (const place of failing) {
    const planned = planAt(at, parsePointer(place.at) as string[], config, lists);
    if ('unremediable' in planned) return planned;
    edits.push(...planned.edits);
  }
  return { edits };
};

/** The edits of one failing rule, or why there are none. */
const planRule = (rule: Rule, config: unknown, variables: Readonly<Record<string, string>>, lists: ListKeys): Planned => {
  const tokens = parsePointer(rule.path) as string[];
  const ask: Ask = {
    mode: rule.mode,
    expected: (ruleValue(rule, variables) as { readonly value: JsonValue | undefined }).value,
    predicates: PREDICATE_FIELDS.filter((field) => rule[field] !== undefined),
    strict: rule.strict === true,
    ordered: rule.ordered === true,
  };
  return overPlaces(rule, tokens) ? planPlaces(rule, ask, tokens, config, variables, lists) : planAt(ask, tokens, config, lists);
};

const hasLongArray = (value: JsonValue | undefined): boolean =>
  // Mutation: `value.some(hasLongArray)` → `every` for an array is equivalent: an array reaching
  // it holds one entry (or none, and unwritable refuses an empty list before).
  Array.isArray(value) ? value.length > 1 || value.some(hasLongArray) : isObject(value) && Object.values(value).some(hasLongArray);

/** The module-qualified name of the node a target's last step names: RFC 7951 qualifies the top of a value. */
const qualifiedName = (steps: readonly Step[]): string => {
  const last = steps.at(-1);
  if (last === undefined) return 'tailf-ncs:config';
  if (last.name.includes(':')) return last.name;
  const module = steps.findLast((step) => step.name.includes(':')) as Step;
  return `${module.name.slice(0, module.name.indexOf(':'))}:${last.name}`;
};

const toPatchEdit = (device: string, edit: Edit, editId: string): YangPatchEdit => ({
  'edit-id': editId,
  operation: edit.operation,
  target: formatTarget(device, edit.steps),
  ...(edit.value === undefined ? {} : { value: { [qualifiedName(edit.steps)]: edit.value } }),
});

/** Whether one pointer is the other or lies below it: their common length agrees, whichever is shorter. */
const overlaps = (a: readonly string[], b: readonly string[]): boolean => a.slice(0, b.length).every((t, i) => t === b[i]);

interface Candidate {
  readonly rule: RemediatedRule;
  readonly edits: readonly Edit[];
  readonly patchEdits: readonly YangPatchEdit[];
}

/** The configuration after `edits`, or the id of the edit refused. */
const tryApply = (
  config: unknown,
  edits: readonly YangPatchEdit[],
  lists: ListKeys,
): { readonly after: unknown } | { readonly refused: string; readonly reason: string } => {
  try {
    return { after: applyEdits(config, edits, lists) };
  } catch (error) {
    if (error instanceof PatchError) return { refused: error.editId, reason: error.message };
    throw error;
  }
};

/** The rule's candidate edits, checked alone: applied, then evaluated. */
const candidateFor = (rule: RemediatedRule, input: RemediationInput): Candidate | string => {
  const planned = planRule(rule, input.config, input.variables, input.listKeys);
  if ('unremediable' in planned) return planned.unremediable;
  let patchEdits: YangPatchEdit[];
  try {
    patchEdits = planned.edits.map((edit, i) => toPatchEdit(input.device, edit, `${rule.id}#${i + 1}`));
  } catch (error) {
    // A name with a lone surrogate has no percent-encoding.
    // Mutation: `error instanceof URIError` → `true` is equivalent: formatTarget throws nothing else.
    if (error instanceof URIError) return 'the device name or a key on the path cannot be percent-encoded (it is not valid Unicode)';
    throw error;
  }
  const applied = tryApply(input.config, patchEdits, input.listKeys);
  // Mutation: not covered: no input is known to reach it (the property test counts such refusals
  // and expects none); it stays so that a generator fault is reported per rule, not sent.
  if ('refused' in applied) return `the operations would be refused: ${applied.reason}`;
  const after = evaluateRule(applied.after, input.variables, rule);
  if (after.status !== 'pass') return `the operations found would not make the rule pass: ${after.message}`;
  return { rule, edits: planned.edits, patchEdits };
};

/**
 * Drops candidates until all of them applied together leave every candidate passing and every
 * rule that passed still passing. A rule that fails afterwards takes down with it every
 * candidate whose edits change a place at, above or below its path; each is reported with the
 * others. Returns the conflicts by rule id.
 */
const settle = (candidates: Candidate[], input: RemediationInput, before: readonly RuleResult[]): Map<string, Set<string>> => {
  const conflicts = new Map<string, Set<string>>();
  for (;;) {
    const applied = tryApply(
      input.config,
      candidates.flatMap((c) => c.patchEdits),
      input.listKeys,
    );
    const ids = new Set(candidates.map((c) => c.rule.id));
    const broken =
      'refused' in applied
        ? input.rules.filter((rule) => candidates.some((c) => c.rule === rule && c.patchEdits.some((e) => e['edit-id'] === applied.refused)))
        : evaluateRules(applied.after, input.variables, input.rules)
            .map((result, i) => ({ result, rule: input.rules[i] as RemediatedRule, passed: before[i]?.status === 'pass' }))
            .filter(({ result, rule, passed }) => result.status !== 'pass' && (passed || ids.has(rule.id)))
            .map(({ rule }) => rule);
    if (broken.length === 0) return conflicts;
    // Every broken rule is blamed on the candidates of this round: blaming the second on what
    // the first left would take down candidates that touch neither.
    const culprits = new Set<Candidate>();
    for (const rule of broken) {
      const tokens = parsePointer(rule.path) as string[];
      const touching = candidates.filter((c) => c.edits.some((e) => overlaps(e.at, tokens)));
      // A rule reads only its path and below, and an edit changes only its place and below, so
      // some candidate always touches a rule that broke; all of them go if none did, so that
      // the loop ends whatever happens.
      const group = touching.length ? touching : candidates;
      for (const culprit of group) {
        culprits.add(culprit);
        const others = conflicts.get(culprit.rule.id) ?? new Set<string>();
        for (const id of [...group.map((c) => c.rule.id), rule.id]) if (id !== culprit.rule.id) others.add(id);
        conflicts.set(culprit.rule.id, others);
      }
    }
    candidates.splice(0, candidates.length, ...candidates.filter((c) => !culprits.has(c)));
  }
};

/**
 * The edits without those a `remove` above them takes along: another `remove`, or a write the
 * removal after it undoes. Sent twice, such an edit would name a place whose list entry is
 * gone, which a patch refuses. Says by which edit each edit is sent (itself, or that removal).
 */
const withoutSubsumed = (edits: readonly YangPatchEdit[]): { readonly edit: YangPatchEdit[]; readonly sentAs: Map<string, string> } => {
  const sentAs = new Map<string, string>();
  const edit: YangPatchEdit[] = [];
  for (const [i, e] of edits.entries()) {
    const above = edits.find((r, j) => r.operation === 'remove' && (e.operation === 'remove' || j > i) && e.target.startsWith(`${r.target}/`));
    sentAs.set(e['edit-id'], above ? above['edit-id'] : e['edit-id']);
    if (!above) edit.push(e);
  }
  return { edit, sentAs };
};

/**
 * One device's remediation: for each failing rule (of `ruleIds` when given), the edits that
 * make it pass, all in one YANG Patch; or, per rule, why it cannot be remediated (no RESTCONF
 * target, nothing to write, a value NSO would refuse, a conflict with another rule), or the
 * exemption that spares it. Passing rules produce nothing.
 */
export const remediateDevice = (input: RemediationInput): DeviceRemediation => {
  const before = evaluateRules(input.config, input.variables, input.rules);
  const failing = input.rules.filter((rule, i) => before[i]?.status !== 'pass' && (input.ruleIds?.has(rule.id) ?? true));
  const outcome = new Map<string, RuleRemediation>();
  const candidates: Candidate[] = [];
  for (const rule of failing) {
    const head = { ruleId: rule.id, ...(rule.node === undefined ? {} : { node: rule.node }) };
    const exemption = input.exemptions?.get(rule.id);
    if (exemption) {
      outcome.set(rule.id, { ...head, exempted: { exemptionId: exemption.exemptionId, until: exemption.until } });
      continue;
    }
    const verdict = before[input.rules.indexOf(rule)] as RuleResult;
    const candidate = verdict.status === 'invalid' ? `the rule cannot be evaluated: ${verdict.message}` : candidateFor(rule, input);
    if (typeof candidate === 'string') outcome.set(rule.id, { ...head, unremediable: candidate });
    else candidates.push(candidate);
  }
  const conflicts = settle(candidates, input, before);
  for (const [id, others] of conflicts) {
    const rule = failing.find((r) => r.id === id) as RemediatedRule;
    const conflictsWith = [...others].sort();
    outcome.set(id, {
      ruleId: id,
      ...(rule.node === undefined ? {} : { node: rule.node }),
      unremediable: `its operations conflict with those of ${conflictsWith.join(', ')}: they cannot all hold`,
      conflictsWith,
    });
  }
  const { edit, sentAs } = withoutSubsumed(candidates.flatMap((c) => c.patchEdits));
  for (const c of candidates) {
    const ids = [...new Set(c.patchEdits.map((e) => sentAs.get(e['edit-id']) as string))];
    outcome.set(c.rule.id, { ruleId: c.rule.id, ...(c.rule.node === undefined ? {} : { node: c.rule.node }), edits: ids });
  }
  return {
    device: input.device,
    ...(edit.length ? { patch: { 'ietf-yang-patch:yang-patch': { 'patch-id': input.patchId ?? `remediation-${input.device}`, edit } } } : {}),
    rules: failing.map((rule) => outcome.get(rule.id) as RuleRemediation),
  };
};
