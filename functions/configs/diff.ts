/**
 * What changed between two configurations of a device, in the two forms a reader asks for: an
 * RFC 6902 JSON Patch (for tools) and a unified text diff of the pretty-printed configurations
 * (for people). Both are computed on the real values, then masked as every other view of a
 * configuration is ({@link redact}): a reader sees that a secret changed, never its value.
 */
import { formatPatch, structuredPatch } from 'diff';
import { compare } from 'fast-json-patch/commonjs/duplex.js';
import { MAX_JSON_DEPTH } from '../platform/bounded-json.js';
import { canonicalJson } from '../platform/canonical-json.js';
import { UnprocessableContent } from '../platform/problem.js';
import { isSecretField, REDACTED, redact } from '../platform/redaction.js';
import type { JsonValue } from '../trees/config-model.js';

/** One operation of a JSON Patch as this module writes it (only `add`, `remove` and `replace`: no `move`, `copy` or `test`). */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace'; readonly path: string; readonly value: JsonValue }
  | { readonly op: 'remove'; readonly path: string };

/** The two answers of the diff route, chosen by its `format` query parameter. */
export const DIFF_FORMATS = ['json-patch', 'unified'] as const;
export type DiffFormat = (typeof DIFF_FORMATS)[number];

/** The media type of each format's answer. */
export const DIFF_MEDIA_TYPES: Readonly<Record<DiffFormat, string>> = {
  'json-patch': 'application/json-patch+json',
  unified: 'text/x-diff; charset=utf-8',
};

/**
 * The most changed lines (removed plus added) a unified diff is computed for. The line diff
 * (jsdiff's Myers diff) costs about D² steps for D changed lines, whatever the size: it stops once
 * it has gone past this many, so that two large, very different configurations cost a bounded
 * time (seconds) and memory; the JSON Patch, linear in the configurations' size, has no such
 * limit. Deterministic, unlike a time budget: the same pair always gets the same answer. See
 * docs/compliance.md, "Diffs", for the numbers.
 */
export const MAX_UNIFIED_EDIT_LINES = 2_000;

/**
 * The most lines (both sides together) the line diff compares once the lines the two
 * configurations share at their head and at their tail are set aside. The Myers diff costs about
 * (lines × changed lines) on top of its D² steps: on 2 MB configurations with changes scattered
 * end to end it ran 15 s and 700 MB before giving up at {@link MAX_UNIFIED_EDIT_LINES}; bounded
 * here, the worst case (this many lines, giving up at the edit limit) runs in a few seconds and
 * under 200 MB. A change confined to part of a configuration of any size is unaffected.
 * docs/compliance.md, "Diffs", has the numbers.
 */
export const MAX_UNIFIED_DIFF_LINES = 200_000;

/** Lines of context around each change, as `diff -u` writes them. */
const CONTEXT_LINES = 3;

/** What names the two sides of a unified diff in its `---` and `+++` headers. */
export interface DiffLabels {
  /** The configuration the diff starts from (`against`): its name (`configs/<configId>`) and optional header (its `takenAt`). */
  readonly against: { readonly name: string; readonly header?: string };
  /** The configuration the diff leads to. */
  readonly config: { readonly name: string; readonly header?: string };
}

const isContainer = (value: unknown): value is object => value !== null && typeof value === 'object';

/** RFC 6901: the tokens of a JSON Pointer (`~1` is `/`, `~0` is `~`). */
const pointerTokens = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));

/** RFC 6901: a JSON Pointer from its tokens. */
const pointerOf = (tokens: readonly string[]): string => tokens.map((token) => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * The RFC 6902 JSON Patch that turns `against` into `config` (real values, nothing masked: apply
 * {@link maskPatch} before any reader sees it). Equal configurations give `[]`. Arrays are
 * compared index by index (an entry inserted at the head of a list replaces each entry after it).
 * Both values are parsed JSON: no `undefined` anywhere, at most `MAX_JSON_DEPTH` levels.
 */
export const configPatch = (against: JsonValue, config: JsonValue): JsonPatchOperation[] => {
  // fast-json-patch compares two containers only: two different scalars at the root would give [].
  if (!isContainer(against) || !isContainer(config) || Array.isArray(against) !== Array.isArray(config)) {
    return canonicalJson(against) === canonicalJson(config) ? [] : [{ op: 'replace', path: '', value: config }];
  }
  return compare(against, config) as JsonPatchOperation[];
};

/**
 * How each token of `tokens` reads in `document`: `true` when it indexes an array (an index
 * tells a reader nothing about a value), `false` when it names an object member.
 */
const indexesArray = (document: JsonValue, tokens: readonly string[]): boolean[] => {
  const kinds: boolean[] = [];
  let node: unknown = document;
  for (const token of tokens) {
    kinds.push(Array.isArray(node));
    node = isContainer(node) && Object.hasOwn(node, token) ? (node as Record<string, unknown>)[token] : undefined;
  }
  return kinds;
};

/**
 * An operation as any reader may see it. Its path keeps each member name and index up to the
 * first member named like a secret ({@link isSecretField}), member names masked as
 * {@link redact} masks keys; below that member, indexes are kept and member names become
 * {@link REDACTED} (a list keyed by secret names leaks none of them). Its value is
 * {@link REDACTED} whole below a secret member, else {@link redact}ed.
 */
const maskOperation = (operation: JsonPatchOperation, against: JsonValue, config: JsonValue): JsonPatchOperation => {
  const tokens = pointerTokens(operation.path);
  // The document that holds the whole path: the added member is only in `config`.
  const kinds = indexesArray(operation.op === 'add' ? config : against, tokens);
  const secretAt = tokens.findIndex((token, i) => !kinds[i] && isSecretField(token));
  const below = (i: number): boolean => secretAt >= 0 && i > secretAt;
  const path = pointerOf(tokens.map((token, i) => (kinds[i] ? token : below(i) ? REDACTED : (redact(token) as string))));
  if (operation.op === 'remove') return { op: 'remove', path };
  const value = secretAt >= 0 ? REDACTED : (redact(operation.value, { maxDepth: MAX_JSON_DEPTH }) as JsonValue);
  return { op: operation.op, path, value };
};

/**
 * A patch of {@link configPatch} as any reader may see it: each operation kept (a changed
 * secret still shows as an operation on its member), every secret value {@link REDACTED}.
 */
export const maskPatch = (patch: readonly JsonPatchOperation[], against: JsonValue, config: JsonValue): JsonPatchOperation[] =>
  patch.map((operation) => maskOperation(operation, against, config));

/** {@link configPatch}, masked ({@link maskPatch}): the diff route's JSON answer. */
export const maskedConfigPatch = (against: JsonValue, config: JsonValue): JsonPatchOperation[] => maskPatch(configPatch(against, config), against, config);

const INDENT = '  ';

/** A value still to print, or the closing line of a container printed already. */
type Pending =
  | {
      readonly value: JsonValue;
      readonly indent: string;
      /** Its member name and `: ` as JSON (empty for an array entry or the root). */
      readonly lead: string;
      /** `,` when an entry follows it. */
      readonly trail: string;
      readonly secret: boolean;
    }
  | { readonly close: string };

/** The entries of a container to print, in order: array entries, or members sorted by name ({@link canonicalJson}'s order). */
const entriesOf = (value: object): [string | undefined, JsonValue][] =>
  Array.isArray(value)
    ? value.map((entry: JsonValue) => [undefined, entry])
    : Object.keys(value)
        .sort()
        .map((name) => [name, (value as Record<string, JsonValue>)[name]!]);

/**
 * `value` pretty-printed as `JSON.stringify(…, null, 2)` writes it, object members in canonical
 * order, with real values: the lines the line diff compares. The value of a member named like a
 * secret is one line, its canonical JSON, so that {@link shownLine} can mask it whole. Iterative,
 * so no depth of nesting can exhaust the stack.
 */
const renderLines = (value: JsonValue): string[] => {
  const lines: string[] = [];
  const stack: Pending[] = [{ value, indent: '', lead: '', trail: '', secret: false }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('close' in item) {
      lines.push(item.close);
      continue;
    }
    const { value: node, indent, lead, trail } = item;
    if (item.secret) lines.push(`${indent}${lead}${canonicalJson(node)}${trail}`);
    else if (!isContainer(node)) lines.push(`${indent}${lead}${JSON.stringify(node)}${trail}`);
    else {
      const entries = entriesOf(node);
      const [open, close] = Array.isArray(node) ? ['[', ']'] : ['{', '}'];
      if (entries.length === 0) {
        lines.push(`${indent}${lead}${open}${close}${trail}`);
        continue;
      }
      lines.push(`${indent}${lead}${open}`);
      stack.push({ close: `${indent}${close}${trail}` });
      const inner = `${indent}${INDENT}`;
      // Pushed last to first, so that they are printed first to last.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, child] = entries[i]!;
        const secret = name !== undefined && isSecretField(name);
        stack.push({
          value: child,
          indent: inner,
          lead: name === undefined ? '' : `${JSON.stringify(name)}: `,
          trail: i < entries.length - 1 ? ',' : '',
          secret,
        });
      }
    }
  }
  return lines;
};

/** A line of {@link renderLines}: indentation, member name (a JSON string) if any, value or bracket, trailing comma. */
const LINE = /^( *)(?:("(?:[^"\\]|\\.)*"): )?(.*?)(,?)$/s;
const BRACKETS = new Set(['{', '[', '}', ']', '{}', '[]']);

/**
 * What a reader sees of a line of {@link renderLines}: the value of a member named like a secret
 * as {@link REDACTED} whatever it holds, every other member name and value as {@link redact}
 * shows it. A line's masking depends on the line alone (a member is masked by its own name, on
 * the same line), so it is computed only for the lines a diff prints.
 */
const shownLine = (real: string): string => {
  const [, indent, nameJson, valueJson, trail] = LINE.exec(real)!;
  const name = nameJson === undefined ? undefined : (JSON.parse(nameJson) as string);
  const lead = name === undefined ? '' : `${JSON.stringify(redact(name))}: `;
  const shown =
    name !== undefined && isSecretField(name)
      ? JSON.stringify(REDACTED)
      : BRACKETS.has(valueJson!)
        ? valueJson
        : JSON.stringify(redact(JSON.parse(valueJson!)));
  return `${indent}${lead}${shown}${trail}`;
};

/** Thrown when two configurations differ in more lines than a unified diff is computed for (422). */
export class DiffTooLarge extends UnprocessableContent {
  constructor(detail: string) {
    super(`${detail}, more than a unified diff is computed for. Ask for the JSON Patch instead (leave out format=unified).`, 'diff-too-large');
  }
}

/** How many lines `a` and `b` share at their head, and then at their tail (the two never overlap). */
const sharedEnds = (a: readonly string[], b: readonly string[]): { readonly head: number; readonly tail: number } => {
  const shorter = Math.min(a.length, b.length);
  let head = 0;
  while (head < shorter && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < shorter - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { head, tail };
};

const textOf = (lines: readonly string[]): string => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);

/**
 * A unified text diff (`diff -u`, 3 lines of context) from `against` to `config`, each
 * pretty-printed with 2 spaces and members in canonical order (a reordering of members is no
 * change), with `---`/`+++` headers naming both (`labels`). Equal configurations give the two
 * headers and no hunk. Masked as {@link renderLines} masks: a changed secret shows as a `-` and a
 * `+` line that both read {@link REDACTED}. The lines both share at their head and tail (but for
 * the context kept around the changes) are set aside before the line diff, whose hunks are then
 * numbered back in the whole texts. Throws {@link DiffTooLarge} past {@link MAX_UNIFIED_DIFF_LINES}
 * lines left to compare or past `maxEditLines` changed lines.
 */
export const unifiedConfigDiff = (against: JsonValue, config: JsonValue, labels: DiffLabels, maxEditLines = MAX_UNIFIED_EDIT_LINES): string => {
  const before = renderLines(against);
  const after = renderLines(config);
  const { head, tail } = sharedEnds(before, after);
  // Keep the context lines next to the first and last change; the rest of the shared ends cannot be in a hunk.
  const start = Math.max(0, head - CONTEXT_LINES);
  const kept = Math.max(0, tail - CONTEXT_LINES);
  const left = before.slice(start, before.length - kept);
  const right = after.slice(start, after.length - kept);
  if (left.length + right.length > MAX_UNIFIED_DIFF_LINES) {
    throw new DiffTooLarge(`The changes between the two configurations span ${left.length + right.length} lines (both sides)`);
  }
  const patch = structuredPatch(labels.against.name, labels.config.name, textOf(left), textOf(right), labels.against.header, labels.config.header, {
    context: CONTEXT_LINES,
    maxEditLength: maxEditLines,
  });
  if (!patch) throw new DiffTooLarge(`The two configurations differ in more than ${maxEditLines} lines`);
  // A hunk of the slices starts at its first context line, which exists whenever start > 0 (head > 0): shifting by start is exact.
  const hunks = patch.hunks.map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + start, newStart: hunk.newStart + start }));
  const last = hunks.at(-1);
  if (last) completeTrailingContext(last, before, start + left.length);
  const shown = hunks.map((hunk) => ({ ...hunk, lines: hunk.lines.map((line) => `${line[0]}${shownLine(line.slice(1))}`) }));
  return formatPatch({ ...patch, hunks: shown }, { includeIndex: false, includeUnderline: false, includeFileHeaders: true });
};

/**
 * Gives the last hunk its full trailing context when the line diff, choosing among equally short
 * edits, put a change within the last context lines of the slice: the lines of `before` after the
 * slice's end (`sliceEnd`, shared by both sides) continue its context.
 */
const completeTrailingContext = (
  hunk: { oldStart: number; oldLines: number; newLines: number; lines: string[] },
  before: readonly string[],
  sliceEnd: number,
): void => {
  if (hunk.oldStart - 1 + hunk.oldLines !== sliceEnd) return;
  let trailing = 0;
  while (trailing < hunk.lines.length && hunk.lines[hunk.lines.length - 1 - trailing]!.startsWith(' ')) trailing++;
  const extra = before.slice(sliceEnd, sliceEnd + Math.max(0, CONTEXT_LINES - trailing));
  hunk.lines.push(...extra.map((line) => ` ${line}`));
  hunk.oldLines += extra.length;
  hunk.newLines += extra.length;
};

/**
 * The format a diff request asks for: `unified` for `format=unified`, the JSON Patch when the
 * parameter is absent or names it (`json-patch`); undefined for anything else (a 400).
 */
export const diffFormatOf = (format: string | undefined): DiffFormat | undefined =>
  format === undefined ? 'json-patch' : (DIFF_FORMATS as readonly string[]).includes(format) ? (format as DiffFormat) : undefined;

/** The diff route's answer: the masked diff from `against` to `config` in `format`, with its media type. */
export const configDiff = (
  against: JsonValue,
  config: JsonValue,
  format: DiffFormat,
  labels: DiffLabels,
): { readonly contentType: string; readonly body: string } => ({
  contentType: DIFF_MEDIA_TYPES[format],
  body: format === 'unified' ? unifiedConfigDiff(against, config, labels) : JSON.stringify(maskedConfigPatch(against, config)),
});
