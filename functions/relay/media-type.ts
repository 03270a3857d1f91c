/**
 * Media types as RFC 9110 §8.3.1 writes them: `type "/" subtype *( OWS ";" OWS parameter )`.
 * The relay copies `params.accept` and `params.contentType` into outgoing headers, so a value
 * must be one well-formed media type: no list, no CR/LF, nothing that could smuggle a header.
 */

/** One media type, lower-cased type and subtype, parameters as given. */
export interface MediaType {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: ReadonlyArray<readonly [name: string, value: string]>;
}

// tchar (RFC 9110 §5.6.2) and quoted-string without obs-text: printable ASCII only.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t -~])*"';
const PARAMETER = new RegExp(`^(${TOKEN})=(${TOKEN}|${QUOTED})$`);
const TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);
const OWS = /^[ \t]*|[ \t]*$/g;

/** Splits on `;` outside quoted strings. */
const splitParameters = (value: string): string[] => {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') {
      // Mutation: `?? ''` → another text is equivalent: only a value ending on the escape takes it, and that quoted
      // string is unterminated either way.
      current += c + (value[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts;
};

/** Parsed media types by text: a relay call parses two or three, nearly always the same few. */
const parsed = new Map<string, MediaType | undefined>();
const MAX_PARSED = 64;
const MAX_REMEMBERED_LENGTH = 256;

/**
 * Parses one media type; `undefined` when it is not well-formed (a list, a bare word, control
 * characters, non-ASCII, an unterminated quoted string…). The result is frozen: it may be
 * handed to the next caller that parses the same text.
 */
export const parseMediaType = (value: string): MediaType | undefined => {
  const known = parsed.get(value);
  // Mutation: `known !== undefined` → `false` is equivalent: `parsed.has(value)` alone decides the same way.
  if (known !== undefined || parsed.has(value)) return known;
  const media = parse(value);
  // Values come from clients and orchestrators: keep a few short ones, the oldest go first.
  if (value.length <= MAX_REMEMBERED_LENGTH) {
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(value, media);
  }
  return media;
};

const parse = (value: string): MediaType | undefined => {
  // Only visible ASCII, space and tab: this alone rules out CR, LF and NUL.
  // Mutation: → `false`, or an anchor dropped, is equivalent: the anchored type, token and quoted-string expressions
  // accept only these characters; `head = ''` below → another default (uncovered) too, as `splitParameters` returns
  // at least one part.
  if (!/^[\t\x20-\x7e]*$/.test(value)) return undefined;
  const [head = '', ...rest] = splitParameters(value);
  const match = TYPE.exec(head.replace(OWS, ''));
  if (!match) return undefined;
  const parameters: (readonly [string, string])[] = [];
  for (const raw of rest) {
    const part = raw.replace(OWS, '');
    if (part === '') continue; // RFC 9110 allows empty parameters (`a/b;;c=d`)
    const p = PARAMETER.exec(part);
    if (!p) return undefined;
    parameters.push(Object.freeze([p[1]!.toLowerCase(), p[2]!] as const));
  }
  return Object.freeze({ type: match[1]!.toLowerCase(), subtype: match[2]!.toLowerCase(), parameters: Object.freeze(parameters) });
};

/** True for `application/json` and every `+json` structured-syntax type (`application/yang-data+json`…). */
export const isJsonMediaType = (media: MediaType | undefined): boolean => media !== undefined && (media.subtype === 'json' || media.subtype.endsWith('+json'));

/** The `charset` parameter, unquoted and lower-cased, if any. */
export const charsetOf = (media: MediaType | undefined): string | undefined => {
  const raw = media?.parameters.find(([name]) => name === 'charset')?.[1];
  // Mutation: without `^` or `$` is equivalent: a value holding `"` is a quoted string, and the greedy `.*` reaches
  // its last quote.
  return raw?.replace(/^"(.*)"$/, '$1').toLowerCase();
};
