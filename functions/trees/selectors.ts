/**
 * Device selectors (a node's `select`, an exemption's `selector`): what they may hold, and
 * whether one selects a device given what NSO knows of it. One matching function serves nodes
 * and exemptions, so a selector means the same wherever it is written.
 */
import type { JsonSchema } from '../platform/json-schema.js';
import { compilePattern } from '../platform/re2.js';
import { fieldPath, type FieldPlace } from '../platform/problem.js';
import { walkNodes, type Node, type Selector } from './config-model.js';

export const SELECTOR_LIMITS = {
  /** Selectors one node holds at most. */
  perNode: 20,
  /** Characters of a group, platform or NED id (NSO's key length), and of a name pattern. */
  text: 253,
} as const;

/** The members a selector may hold, in the order it is stored and shown. */
export const SELECTOR_MEMBERS = ['group', 'namePattern', 'platform', 'ned'] as const;

/** What NSO knows of a device, as selectors read it. */
export interface DeviceFacts {
  readonly name: string;
  /** The device groups the device is in, nested ones included (a group holding a group that holds it). */
  readonly groups: ReadonlySet<string>;
  /** NSO's `platform/name` (`ios-xr`), when NSO knows it. */
  readonly platform?: string;
  /** The NED id of the device's type (`cisco-iosxr-cli-7.52:cisco-iosxr-cli-7.52`), when it has one. */
  readonly ned?: string;
}

/** A NED id without its `module:` prefix, in lower case: how `ned` compares. */
export const nedKey = (ned: string): string => ned.slice(ned.lastIndexOf(':') + 1).toLowerCase();

/**
 * Whether `selector` selects the device: every member it gives holds (see {@link Selector}). A
 * selector whose name pattern does not compile selects nothing (writes refuse such patterns).
 */
export const selects = (selector: Selector, facts: DeviceFacts): boolean => {
  if (selector.group !== undefined && !facts.groups.has(selector.group)) return false;
  if (selector.platform !== undefined && facts.platform?.toLowerCase() !== selector.platform.toLowerCase()) return false;
  if (selector.ned !== undefined && (facts.ned === undefined || nedKey(facts.ned) !== nedKey(selector.ned))) return false;
  if (selector.namePattern !== undefined) {
    const pattern = compilePattern(selector.namePattern);
    if ('problem' in pattern || !pattern.test(facts.name)) return false;
  }
  return true;
};

/** Whether any of `selectors` selects the device. */
export const selectsAny = (selectors: readonly Selector[], facts: DeviceFacts): boolean => selectors.some((s) => selects(s, facts));

/** A selector as stored: only the known members, in a fixed order. */
export const normalizeSelector = (selector: Selector): Selector =>
  Object.fromEntries(SELECTOR_MEMBERS.filter((m) => selector[m] !== undefined).map((m) => [m, selector[m]])) as Selector;

/** `group core and platform ios-xr`: a selector in words, for messages. */
export const describeSelector = (selector: Selector): string =>
  SELECTOR_MEMBERS.filter((m) => selector[m] !== undefined)
    .map((m) => `${m} ${JSON.stringify(selector[m])}`)
    .join(' and ');

/** One selector as a request body holds it (a node's `select` entry, an exemption's `selector`). */
export const selectorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    group: {
      type: 'string',
      minLength: 1,
      maxLength: SELECTOR_LIMITS.text,
      description: 'An NSO device group: its devices and those of the groups nested in it',
    },
    namePattern: {
      type: 'string',
      minLength: 1,
      maxLength: SELECTOR_LIMITS.text,
      description: 'An RE2 regular expression found in the device name (`^` and `$` anchor it)',
    },
    platform: { type: 'string', minLength: 1, maxLength: SELECTOR_LIMITS.text, description: "NSO's `platform/name` of the device (`ios-xr`), any case" },
    ned: {
      type: 'string',
      minLength: 1,
      maxLength: SELECTOR_LIMITS.text,
      description: "The NED id of the device's type (`cisco-iosxr-cli-7.52`), any case, with or without its `module:` prefix",
    },
  },
  description: 'Selects the devices NSO knows that meet every member given (at least one), resolved when a batch starts',
};

/**
 * The problems of one selector beyond its JSON Schema (imports and seeds are checked here too):
 * at least one member, each a string of at most {@link SELECTOR_LIMITS.text} characters, and a
 * name pattern that compiles as RE2. `at` is the selector's place.
 */
export const selectorProblems = (selector: Selector, at: FieldPlace): { readonly field: string; readonly message: string }[] => {
  const given = SELECTOR_MEMBERS.filter((m) => selector[m] !== undefined);
  if (given.length === 0) return [{ field: fieldPath(...at), message: `must give at least one of ${SELECTOR_MEMBERS.join(', ')}` }];
  const out: { field: string; message: string }[] = [];
  for (const member of given) {
    const text = selector[member];
    if (typeof text !== 'string' || text === '' || [...text].length > SELECTOR_LIMITS.text)
      out.push({ field: fieldPath(...at, member), message: `must be 1 to ${SELECTOR_LIMITS.text} characters` });
  }
  if (out.length === 0 && selector.namePattern !== undefined) {
    const pattern = compilePattern(selector.namePattern);
    if ('problem' in pattern) out.push({ field: fieldPath(...at, 'namePattern'), message: pattern.problem });
  }
  return out;
};

/** The problems of a node's `select` list: its length, and each selector's. */
export const selectListProblems = (
  select: readonly Selector[],
  at: FieldPlace,
): { readonly field: string; readonly message: string; readonly kind?: 'limit' }[] => [
  ...(select.length > SELECTOR_LIMITS.perNode
    ? [{ field: fieldPath(...at), message: `has more than ${SELECTOR_LIMITS.perNode} selectors`, kind: 'limit' as const }]
    : []),
  ...select.flatMap((selector, i) => selectorProblems(selector, [...at, i])),
];

/** A node's `select` as stored: absent when empty, each selector normalized. */
export const selectOf = (select: readonly Selector[] | undefined): { readonly select?: readonly Selector[] } =>
  select?.length ? { select: select.map(normalizeSelector) } : {};

/** Whether some node of the version under `root` selects devices (its devices are known only when a batch starts). */
export const versionSelects = (root: Node): boolean => [...walkNodes(root)].some(({ node }) => node.select?.length);
