/**
 * The small part of API Gateway's mapping language the template uses: `$context.*` and
 * `$stageVariables.*` references in body templates; in response templates, `#set` of variables
 * and response headers (`#set($context.responseOverride.header.X = "…")`, with `$context.*`,
 * `$input.params('p')` and variables; or `$context.x.replaceAll('re', 'text')`), and
 * `#if(…)`/`#end` over `matches` and `!= ''` tests
 * (see {@link renderResponseTemplate}); and `'literal'` /
 * `method.request.*` / `context.*` / `stageVariables.*` sources in header mappings. Other VTL
 * directives and `$input`/`$util` are not evaluated; {@link unsupportedMapping} finds them so
 * that the local stack can say so at start instead of answering differently from AWS.
 */

/** What a request offers to mappings. `context` holds `$context` variables, nested (`error.message`). */
export interface MappingInput {
  readonly context: Readonly<Record<string, unknown>>;
  readonly stageVariables: Readonly<Record<string, string>> | null;
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly pathParameters: Readonly<Record<string, string>>;
}

const lookup = (root: unknown, dotted: string): unknown => {
  let current = root;
  for (const key of dotted.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
};

const REFERENCE = /\$!?\{?(context|stageVariables)((?:\.[A-Za-z0-9_]+)+)\}?/g;

/** Substitutes `$context.a.b` and `$stageVariables.x` (also `${…}` and quiet `$!…`); unknown ones become empty. */
export const renderTemplate = (template: string, input: Pick<MappingInput, 'context' | 'stageVariables'>): string =>
  template.replaceAll(REFERENCE, (whole, root: string, dotted: string) => {
    // `${context.x}` must close its brace; `$context.x}` leaves the brace as text.
    const braced = whole.startsWith('${') || whole.startsWith('$!{');
    const closes = whole.endsWith('}');
    const value = lookup(root === 'context' ? input.context : input.stageVariables, dotted.slice(1));
    const text = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    return braced || !closes ? text : `${text}}`;
  });

/** The value of one header mapping source, or undefined when the source has no value. */
export const mapParameter = (source: string, input: MappingInput): string | undefined => {
  const literal = /^'(.*)'$/s.exec(source);
  if (literal) return literal[1];
  const [, where, name] = /^method\.request\.(header|querystring|path)\.(.+)$/.exec(source) ?? [];
  if (where && name) {
    if (where === 'header') return input.headers[name.toLowerCase()];
    if (where === 'querystring') return input.query[name];
    return input.pathParameters[name];
  }
  if (source.startsWith('context.')) {
    const v = lookup(input.context, source.slice('context.'.length));
    return v === undefined || v === null ? undefined : String(v);
  }
  if (source.startsWith('stageVariables.')) return input.stageVariables?.[source.slice('stageVariables.'.length)];
  return undefined;
};

/** The headers a `<prefix>.header.<Name>` → source map produces, in the template's spelling. */
export const mapHeaders = (parameters: Readonly<Record<string, string>>, prefix: string, input: MappingInput): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [target, source] of Object.entries(parameters)) {
    if (!target.startsWith(`${prefix}.header.`)) continue;
    const value = mapParameter(source, input);
    if (value !== undefined) out[target.slice(prefix.length + '.header.'.length)] = value;
  }
  return out;
};

/** One piece of a response template: text to print, or a directive. */
type Piece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'set'; readonly name: string; readonly quote: string; readonly value: string }
  | { readonly kind: 'replace'; readonly name: string; readonly source: string; readonly pattern: string; readonly replacement: string }
  | { readonly kind: 'if'; readonly conditions: readonly Condition[] }
  | { readonly kind: 'end' };
type Condition = { readonly param: string; readonly pattern: string } | { readonly variable: string };

class Unsupported extends Error {}

/** The text of a directive's parentheses from `open` (the `(`), quotes respected; and the index after `)`. */
const parenthesized = (template: string, open: number): [string, number] => {
  let depth = 0;
  let quote = '';
  for (let i = open; i < template.length; i++) {
    const c = template[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return [template.slice(open + 1, i), i + 1];
  }
  throw new Unsupported('an unclosed directive');
};

const SET_BODY = /^\$([A-Za-z][\w.-]*) = (['"])(.*)\2$/s;
/** `$v = $context.x.replaceAll('re', 'text')`: Java's `String.replaceAll`, with a replacement free of `$` and `\`. */
const SET_REPLACE = /^\$([A-Za-z]\w*) = \$context\.([\w.]+)\.replaceAll\('([^']*)', '([^'$\\]*)'\)$/s;
const MATCHES = /^\$input\.params\('([^']+)'\)\.matches\('([^']*)'\)/;
const NOT_EMPTY = /^\$(\w+) != ''/;

const conditions = (text: string): Condition[] => {
  const out: Condition[] = [];
  for (let rest = text.trim(); ; ) {
    const m = MATCHES.exec(rest);
    const n = m ? null : NOT_EMPTY.exec(rest);
    if (m) out.push({ param: m[1]!, pattern: m[2]! });
    else if (n) out.push({ variable: n[1]! });
    else throw new Unsupported(`the condition ${rest}`);
    rest = rest.slice((m ?? n)![0].length).trim();
    if (!rest) return out;
    if (!rest.startsWith('&&')) throw new Unsupported(`the condition ${rest}`);
    rest = rest.slice(2).trim();
  }
};

const DIRECTIVE = /(?<!\\)#(set|if|end|foreach|else|elseif|define|macro|include|parse|break|stop|evaluate)\b/g;

/**
 * The template as pieces: `#set($v = '…')`, `#set($v = "…")`, `#if(…)` over `$input.params('p').matches('re')`
 * and `$v != ''` joined by `&&`, `#end`; a newline right after a directive prints nothing, as in
 * API Gateway's Velocity. Anything else of VTL throws {@link Unsupported}.
 */
const pieces = (template: string): Piece[] => {
  const out: Piece[] = [];
  let at = 0;
  for (const m of template.matchAll(DIRECTIVE)) {
    const start = m.index;
    if (start < at) continue;
    const keyword = m[1]!;
    if (start > at) out.push({ kind: 'text', text: template.slice(at, start) });
    let end = start + 1 + keyword.length;
    if (keyword === 'end') out.push({ kind: 'end' });
    else if ((keyword === 'set' || keyword === 'if') && template[end] === '(') {
      const [inner, after] = parenthesized(template, end);
      end = after;
      if (keyword === 'if') out.push({ kind: 'if', conditions: conditions(inner) });
      else {
        const set = SET_BODY.exec(inner.trim());
        const replace = set ? null : SET_REPLACE.exec(inner.trim());
        if (replace) out.push({ kind: 'replace', name: replace[1]!, source: replace[2]!, pattern: replace[3]!, replacement: replace[4]! });
        else if (!set) throw new Unsupported(`#set(${inner})`);
        else out.push({ kind: 'set', name: set[1]!, quote: set[2]!, value: set[3]! });
      }
    } else throw new Unsupported(`#${keyword}`);
    at = template[end] === '\n' ? end + 1 : end;
  }
  if (at < template.length) out.push({ kind: 'text', text: template.slice(at) });
  return out;
};

/** `$input.params('p')`: the path parameter, else the query string's, else the header's. */
const inputParam = (input: MappingInput, name: string): string => input.pathParameters[name] ?? input.query[name] ?? input.headers[name.toLowerCase()] ?? '';

const INTERPOLATED = new RegExp(`\\$input\\.params\\('([^']+)'\\)|${REFERENCE.source}|\\$\\{(\\w+)\\}|\\$(\\w+)\\b(?!\\.)`, 'g');

/** A double-quoted string's value: every reference replaced once (a value is never read as template). */
const interpolate = (text: string, input: MappingInput, variables: Readonly<Record<string, string>>): string =>
  text.replaceAll(INTERPOLATED, (whole, param?: string, root?: string, _dotted?: string, braced?: string, bare?: string) => {
    if (param !== undefined) return inputParam(input, param);
    if (root !== undefined) return renderTemplate(whole, input);
    return variables[(braced ?? bare)!] ?? whole;
  });

const holds = (condition: Condition, input: MappingInput, variables: Readonly<Record<string, string>>): boolean =>
  'param' in condition ? new RegExp(`^(?:${condition.pattern})$`).test(inputParam(input, condition.param)) : (variables[condition.variable] ?? '') !== '';

const HEADER_TARGET = 'context.responseOverride.header.';

/**
 * A response template as API Gateway renders it: the directives set variables and response
 * headers (`#set($context.responseOverride.header.X = "…")`) and print nothing; the rest is the
 * body with `$context`/`$stageVariables` substituted.
 */
export const renderResponseTemplate = (template: string, input: MappingInput): { headers: Record<string, string>; body: string } => {
  const variables: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const body: string[] = [];
  const open: boolean[] = [];
  for (const piece of pieces(template)) {
    if (piece.kind === 'if') open.push(piece.conditions.every((c) => holds(c, input, variables)));
    else if (piece.kind === 'end') open.pop();
    else if (!open.every(Boolean)) continue;
    else if (piece.kind === 'text') body.push(renderTemplate(piece.text, input));
    else if (piece.kind === 'replace')
      variables[piece.name] = String(lookup(input.context, piece.source) ?? '').replace(new RegExp(piece.pattern, 'g'), piece.replacement);
    else {
      const value = piece.quote === '"' ? interpolate(piece.value, input, variables) : piece.value;
      if (piece.name.startsWith(HEADER_TARGET)) headers[piece.name.slice(HEADER_TARGET.length)] = value;
      else variables[piece.name] = value;
    }
  }
  return { headers, body: body.join('') };
};

/** Why a mapping template cannot be rendered here, or undefined when it can. */
export const unsupportedMapping = (template: string): string | undefined => {
  let text: string;
  try {
    text = pieces(template)
      .map((p) => (p.kind === 'text' ? p.text : ''))
      .join('');
  } catch (error) {
    if (error instanceof Unsupported) return 'VTL directives';
    throw error;
  }
  if (/\$!?\{?(input|util)\./.test(text)) return '$input/$util references';
  return undefined;
};
