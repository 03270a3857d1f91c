/**
 * The small part of API Gateway's mapping language the template uses: `$context.*` and
 * `$stageVariables.*` references in body templates, and `'literal'` / `method.request.*` /
 * `context.*` / `stageVariables.*` sources in header mappings. VTL directives (`#set`, `#if`)
 * and `$input`/`$util` are not evaluated; {@link unsupportedMapping} finds them so that the
 * local stack can say so at start instead of answering differently from AWS.
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

/** Why a mapping template cannot be rendered here, or undefined when it can. */
export const unsupportedMapping = (template: string): string | undefined => {
  if (/(^|[^\\])#(set|if|foreach|else|end|define|macro|include|parse)\b/.test(template)) return 'VTL directives';
  if (/\$!?\{?(input|util)\./.test(template)) return '$input/$util references';
  return undefined;
};
