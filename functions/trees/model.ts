/**
 * The golden-configuration tree as users see it (spec 2.3), its limits, and the one shape
 * check shared by every place that meets a tree it did not build itself: an item read back
 * from DynamoDB, and an entry of a seed file.
 */
import { namePatternSource, nameProblem, pathNameProblem } from '../platform/names.js';

/** A tree summary, exactly the fields of spec 2.3 plus the optional description. */
export interface TreeSummary {
  /** 24 lowercase hexadecimal characters. */
  readonly id: string;
  readonly name: string;
  readonly deviceType: string;
  /** Version labels in stored order; labels may repeat. */
  readonly versions: readonly string[];
  /** ISO 8601 UTC with milliseconds, e.g. `2019-04-12T14:42:47.958Z`. */
  readonly created: string;
  readonly lastUpdated: string;
  readonly description?: string;
}

/**
 * Length limits, in Unicode code points (what JSON Schema's `maxLength` counts). They keep
 * the `NAME#<name>` lock key and the `byName` sort key far below DynamoDB's key size limits.
 */
export const TREE_LIMITS = {
  name: 128,
  deviceType: 128,
  description: 1024,
  versionLabel: 128,
  versions: 1000,
} as const;

/**
 * The one rule for a version label, whoever writes it (a new version, a rename, an import, a
 * seed file): the path-name rule. It has no `~`, so no label can look like `label~2`, the
 * address of a repeated label's second version; and no character that DynamoDB stores in more
 * than one byte, so 1000 labels always fit the tree's item.
 */
export const versionLabelProblem = (label: string): string | undefined => pathNameProblem(label);

/** A tree id: 24 lowercase hexadecimal characters (96 random bits). */
export const TREE_ID_PATTERN = /^[0-9a-f]{24}$/;

/**
 * Names and device types follow the rule for every stored name (names.ts), so that two names
 * that look the same are the same: as JSON Schema pattern source (all of it but NFC, which
 * {@link nameProblem} adds).
 */
export const LABEL_PATTERN_SOURCE = namePatternSource();

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The decimal number of `length` digits at `start` (the caller checked they are digits). */
const digits = (s: string, start: number, length: number): number => {
  let n = 0;
  for (let i = start; i < start + length; i++) n = n * 10 + s.charCodeAt(i) - 48;
  return n;
};

/**
 * True for an ISO 8601 UTC timestamp with milliseconds that names a real instant (no 30 February).
 * Checked with arithmetic rather than a `Date` round trip: it runs twice on every tree read, and
 * the round trip cost more than the rest of the read's own work (same answers: the benchmark's
 * unit test compares both on generated input).
 */
export const isIsoMillis = (value: unknown): value is string => {
  if (typeof value !== 'string' || !ISO_MILLIS.test(value)) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && digits(value, 11, 2) <= 23 && digits(value, 14, 2) <= 59 && digits(value, 17, 2) <= 59;
};

const codePoints = (s: string): number => [...s].length;

const SUMMARY_FIELDS = new Set(['id', 'name', 'deviceType', 'versions', 'created', 'lastUpdated', 'description']);

/**
 * How strictly {@link summaryProblems} checks: `input` (a seed file entry) applies every rule
 * a client-created tree obeys, limits included, and rejects unknown properties; `stored` (an
 * item read back) checks presence, types and formats only, so that a limit tightened later
 * never makes existing trees unreadable, and ignores the key attributes beside the fields.
 */
export type CheckMode = 'input' | 'stored';

const checkLabel = (problems: string[], mode: CheckMode, field: string, value: unknown, max: number): void => {
  if (typeof value !== 'string') problems.push(value === undefined ? `${field} is missing` : `${field} is not a string`);
  else if (value.length === 0) problems.push(`${field} is empty`);
  else if (mode === 'stored') return;
  else if (codePoints(value) > max) problems.push(`${field} is longer than ${max} characters`);
  else {
    const problem = nameProblem(value);
    if (problem) problems.push(`${field} ${problem}`);
  }
};

/**
 * Every way `value` fails to be a {@link TreeSummary}; empty when it is one. Messages name the
 * field and never echo its value (they end up in logs and seed reports).
 */
export const summaryProblems = (value: unknown, mode: CheckMode): string[] => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['is not an object'];
  const v = value as Record<string, unknown>;
  const strict = mode === 'input';
  const problems: string[] = [];
  if (typeof v['id'] !== 'string') problems.push(v['id'] === undefined ? 'id is missing' : 'id is not a string');
  else if (!TREE_ID_PATTERN.test(v['id'])) problems.push('id is not 24 lowercase hexadecimal characters');
  checkLabel(problems, mode, 'name', v['name'], TREE_LIMITS.name);
  checkLabel(problems, mode, 'deviceType', v['deviceType'], TREE_LIMITS.deviceType);
  const versions = v['versions'];
  if (!Array.isArray(versions)) problems.push(versions === undefined ? 'versions is missing' : 'versions is not an array');
  else if (strict && versions.length > TREE_LIMITS.versions) problems.push(`versions has more than ${TREE_LIMITS.versions} labels`);
  else {
    versions.forEach((label: unknown, i) => {
      if (typeof label !== 'string') problems.push(`versions.${i} is not a string`);
      else if (!strict) return;
      else if (label.length === 0) problems.push(`versions.${i} is empty`);
      else if (codePoints(label) > TREE_LIMITS.versionLabel) problems.push(`versions.${i} is longer than ${TREE_LIMITS.versionLabel} characters`);
      else if (versionLabelProblem(label)) problems.push(`versions.${i} ${versionLabelProblem(label)}`);
    });
  }
  for (const field of ['created', 'lastUpdated'] as const) {
    if (v[field] === undefined) problems.push(`${field} is missing`);
    else if (!isIsoMillis(v[field])) problems.push(`${field} is not an ISO 8601 UTC timestamp with milliseconds`);
  }
  if (strict && isIsoMillis(v['created']) && isIsoMillis(v['lastUpdated']) && v['lastUpdated'] < v['created']) {
    problems.push('lastUpdated is before created');
  }
  const description = v['description'];
  if (description !== undefined) {
    if (typeof description !== 'string') problems.push('description is not a string');
    else if (strict && codePoints(description) > TREE_LIMITS.description) problems.push(`description is longer than ${TREE_LIMITS.description} characters`);
  }
  if (strict) {
    for (const key of Object.keys(v)) if (!SUMMARY_FIELDS.has(key)) problems.push(`${key} is not a tree summary field`);
  }
  return problems;
};

/** The summary fields of a value already checked by {@link summaryProblems}, in spec order, nothing else. */
export const pickSummary = (v: TreeSummary): TreeSummary => ({
  id: v.id,
  name: v.name,
  deviceType: v.deviceType,
  versions: [...v.versions],
  created: v.created,
  lastUpdated: v.lastUpdated,
  ...(v.description !== undefined ? { description: v.description } : {}),
});
