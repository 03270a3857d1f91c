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
 * (Myers, O((N+M)·D) for D changed lines) stops once it has gone past this many, so that two
 * large, very different configurations cost a bounded time and memory; the JSON Patch, linear in
 * the configurations' size, has no such limit. See docs/compliance.md, "Diffs", for the numbers.
 */
export const MAX_UNIFIED_EDIT_LINES = 20_000;

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

/**
 * One line of a pretty-printed configuration: `shown`, what a reader sees (masked), and `real`,
 * what it stands for (the real value of a masked scalar or subtree, else the shown text): two
 * lines are the same line only when both agree.
 */
interface RenderedLine {
  readonly shown: string;
  readonly real: string;
}

const INDENT = '  ';

/** A value still to print, or the closing line of a container printed already. */
type Pending =
  | {
      readonly value: JsonValue;
      readonly depth: number;
      /** Its member name and `: ` as shown and as it really is (empty for an array entry). */
      readonly lead: { readonly shown: string; readonly real: string };
      /** `,` when an entry follows it. */
      readonly trail: string;
      /** Whether it is the value of a member named like a secret. */
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
 * order, masked as {@link redact} masks: the value of a member named like a secret is one line
 * reading {@link REDACTED} whatever it holds; every other string and member name is shown
 * {@link redact}ed. Iterative, so no depth of nesting can exhaust the stack.
 */
const renderLines = (value: JsonValue): RenderedLine[] => {
  const lines: RenderedLine[] = [];
  const same = (text: string): RenderedLine => ({ shown: text, real: text });
  const stack: Pending[] = [{ value, depth: 0, lead: { shown: '', real: '' }, trail: '', secret: false }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('close' in item) {
      lines.push(same(item.close));
      continue;
    }
    const indent = INDENT.repeat(item.depth);
    const line = (shown: string, real: string): RenderedLine => ({
      shown: `${indent}${item.lead.shown}${shown}${item.trail}`,
      real: `${indent}${item.lead.real}${real}${item.trail}`,
    });
    if (item.secret) lines.push(line(JSON.stringify(REDACTED), canonicalJson(item.value)));
    else if (!isContainer(item.value)) lines.push(line(JSON.stringify(redact(item.value)), JSON.stringify(item.value)));
    else {
      const entries = entriesOf(item.value);
      const [open, close] = Array.isArray(item.value) ? ['[', ']'] : ['{', '}'];
      if (entries.length === 0) {
        lines.push(line(`${open}${close}`, `${open}${close}`));
        continue;
      }
      lines.push({ shown: `${indent}${item.lead.shown}${open}`, real: `${indent}${item.lead.real}${open}` });
      stack.push({ close: `${indent}${close}${item.trail}` });
      // Pushed last to first, so that they are printed first to last.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, child] = entries[i]!;
        const lead = name === undefined ? { shown: '', real: '' } : { shown: `${JSON.stringify(redact(name))}: `, real: `${JSON.stringify(name)}: ` };
        const trail = i < entries.length - 1 ? ',' : '';
        stack.push({ value: child, depth: item.depth + 1, lead, trail, secret: name !== undefined && isSecretField(name) });
      }
    }
  }
  return lines;
};

/**
 * Both configurations' lines as texts the line diff can compare: each distinct line (its shown
 * and real text together) becomes one number, so that the diff sees real values while the
 * output is built from the shown ones only.
 */
const internLines = (against: readonly RenderedLine[], config: readonly RenderedLine[]) => {
  const ids = new Map<string, number>();
  const shown: string[] = [];
  const text = (lines: readonly RenderedLine[]): string =>
    lines
      .map((line) => {
        const key = `${line.shown}\u0000${line.real}`;
        let id = ids.get(key);
        if (id === undefined) {
          id = shown.length;
          ids.set(key, id);
          shown.push(line.shown);
        }
        return `${id}\n`;
      })
      .join('');
  return { againstText: text(against), configText: text(config), shown };
};

/** Thrown when two configurations differ in more lines than a unified diff is computed for (422). */
export class DiffTooLarge extends UnprocessableContent {
  constructor() {
    super(
      `The two configurations differ in more than ${MAX_UNIFIED_EDIT_LINES} lines, more than a unified diff is computed for. Ask for the JSON Patch instead (leave out format=unified).`,
      'diff-too-large',
    );
  }
}

/**
 * A unified text diff (`diff -u`, 3 lines of context) from `against` to `config`, each
 * pretty-printed with 2 spaces and members in canonical order (a reordering of members is no
 * change), with `---`/`+++` headers naming both (`labels`). Equal configurations give the two
 * headers and no hunk. Masked as {@link renderLines} masks: a changed secret shows as a `-` and a
 * `+` line that both read {@link REDACTED}. Throws {@link DiffTooLarge} past
 * {@link MAX_UNIFIED_EDIT_LINES} changed lines.
 */
export const unifiedConfigDiff = (against: JsonValue, config: JsonValue, labels: DiffLabels, maxEditLines = MAX_UNIFIED_EDIT_LINES): string => {
  const { againstText, configText, shown } = internLines(renderLines(against), renderLines(config));
  const patch = structuredPatch(labels.against.name, labels.config.name, againstText, configText, labels.against.header, labels.config.header, {
    context: CONTEXT_LINES,
    maxEditLength: maxEditLines,
  });
  if (!patch) throw new DiffTooLarge();
  const hunks = patch.hunks.map((hunk) => ({ ...hunk, lines: hunk.lines.map((line) => `${line[0]}${shown[Number(line.slice(1))]}`) }));
  return formatPatch({ ...patch, hunks }, { includeIndex: false, includeUnderline: false, includeFileHeaders: true });
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
