/**
 * The small part of API Gateway's mapping language the template uses: `$context.*` and
 * `$stageVariables.*` references in body templates; in response templates, lines that set a
 * response header (`#set($context.responseOverride.header.X = "…")`, with `$context.*`,
 * `$input.params('p')` and variables set from a quoted literal); and `'literal'` /
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

const SET_LITERAL = /^#set\(\$(\w+) = '([^']*)'\)$/;
const SET_HEADER = /^#set\(\$context\.responseOverride\.header\.([A-Za-z0-9-]+) = "([^"]*)"\)$/;
const INPUT_PARAM = /\$input\.params\('([^']+)'\)/g;

/**
 * A response template as API Gateway renders it: the header-setting lines give headers (they
 * print nothing), the rest is the body with `$context`/`$stageVariables` substituted.
 */
export const renderResponseTemplate = (template: string, input: MappingInput): { headers: Record<string, string>; body: string } => {
  const variables: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const body: string[] = [];
  for (const line of template.split('\n')) {
    const literal = SET_LITERAL.exec(line.trim());
    const header = literal ? null : SET_HEADER.exec(line.trim());
    if (literal) variables[literal[1]!] = literal[2]!;
    else if (header) {
      // `$input.params('p')`: the path parameter, else the query string's, else the header's.
      const value = header[2]!
        .replaceAll(INPUT_PARAM, (_, name: string) => input.pathParameters[name] ?? input.query[name] ?? input.headers[name.toLowerCase()] ?? '')
        .replaceAll(/\$\{(\w+)\}|\$(\w+)\b(?!\.)/g, (whole, braced?: string, bare?: string) => variables[(braced ?? bare)!] ?? whole);
      headers[header[1]!] = renderTemplate(value, input);
    } else body.push(line);
  }
  return { headers, body: renderTemplate(body.join('\n'), input) };
};

/** Why a mapping template cannot be rendered here, or undefined when it can. */
export const unsupportedMapping = (template: string): string | undefined => {
  template = template
    .split('\n')
    .filter((line) => !SET_LITERAL.test(line.trim()) && !SET_HEADER.test(line.trim()))
    .join('\n')
    .replaceAll(INPUT_PARAM, '');
  if (/(^|[^\\])#(set|if|foreach|else|end|define|macro|include|parse)\b/.test(template)) return 'VTL directives';
  if (/\$!?\{?(input|util)\./.test(template)) return '$input/$util references';
  return undefined;
};
