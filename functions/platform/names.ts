/**
 * The one rule for every name the service stores (tree names and device types, version labels,
 * node names, device names, adapter names, profile ids): a name is refused, never rewritten,
 * since it is an identifier that URLs, exports and the orchestrator repeat verbatim. Refused:
 * an empty name, whitespace at either end, and any character that is invisible or has no
 * meaning of its own: control (Cc), format (Cf: zero-width, bidirectional), surrogate (Cs: a
 * lone half of a pair, which has no UTF-8 form), private use (Co), unassigned (Cn, by the
 * runtime's Unicode version), non-characters (U+FDD0..U+FDEF, U+xxFFFE/F), any
 * Default_Ignorable_Code_Point (combining grapheme joiner, variation selectors, Hangul fillers,
 * Khmer inherent vowels…), the Braille blank U+2800 (a symbol, but it prints as nothing), and
 * any whitespace but the plain space (line and paragraph separators, no-break and other
 * spaces); also a name not in Unicode Normalization Form C. So two names that look the same
 * are the same string. Each kind of name may narrow its characters further ({@link
 * isPathName}); identifiers compared without case say so where they are stored.
 */
import { BadRequest, describeFieldErrors, type FieldError } from './problem.js';

/** The refused characters but whitespace, as character class content (`u` flag). */
const REFUSED_CLASS = '\\p{Cc}\\p{Cf}\\p{Cs}\\p{Co}\\p{Cn}\\p{Noncharacter_Code_Point}\\p{Default_Ignorable_Code_Point}\\u2800';

/**
 * The character rule of a name as JSON Schema pattern source (Ajv compiles it with `u`, as
 * `nameProblem` does: the same engine reads the same properties); `extra` are more refused
 * characters, as class content.
 */
export const namePatternSource = (extra = ''): string => {
  const char = `[^\\s${REFUSED_CLASS}${extra}]`;
  return `^${char}(?:(?:${char}| )*${char})?$`;
};

const NAME = new RegExp(namePatternSource(), 'u');
const REFUSED_CHAR = new RegExp(`[${REFUSED_CLASS}]|(?! )\\s`, 'u');

const codePoint = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `name` breaks the rule for every stored name, as a message after the field's name; `undefined` when it keeps it. */
export const nameProblem = (name: string): string | undefined => {
  if (NAME.test(name)) return name.normalize('NFC') === name ? undefined : 'is not in Unicode Normalization Form C (NFC): send its composed form';
  if (name === '') return 'is empty';
  if (name.trim() === '') return 'is blank';
  const refused = REFUSED_CHAR.exec(name.trim());
  if (refused)
    return `holds the character ${codePoint(refused[0])}: names may hold no control, format (zero-width, bidirectional), private-use, unassigned, non-character, surrogate, ignorable or invisible character, and no whitespace but the space`;
  return 'has whitespace at its start or end';
};

/**
 * Names that appear as URL path segments (adapters, tree nodes, version labels) have fewer
 * characters: 1 to 128 letters, digits, spaces, `-`, `_`, `.`; `.` and `..` alone are not names
 * (they are path steps). A valid name has no `%`, so decoding a path segment once is always safe.
 */
export const NAME_RULE = 'must be 1 to 128 letters, digits, spaces, "-", "_" or "." with no space at either end (and not "." or "..")';
const PATH_NAME = /^[A-Za-z0-9 ._-]{1,128}$/;

/** A new path name as JSON Schema pattern source: {@link NAME_RULE}, but for `.` and `..`. */
export const PATH_NAME_PATTERN_SOURCE = '^[A-Za-z0-9._-](?:[A-Za-z0-9 ._-]{0,126}[A-Za-z0-9._-])?$';

/**
 * True when `name` has the characters of a path name. This addresses what is stored (also a
 * name stored before the edge-space rule, so that it can still be read and deleted); a new
 * name must also pass {@link pathNameProblem}.
 */
export const isPathName = (name: string): boolean => PATH_NAME.test(name) && name !== '.' && name !== '..';

/** Why `name` cannot be stored as a path name; `undefined` when it can. */
export const pathNameProblem = (name: string): string | undefined => (isPathName(name) ? nameProblem(name) && NAME_RULE : NAME_RULE);

/**
 * Throws a 400 naming every field (a {@link fieldPath} in `where`) whose name breaks `rule`
 * ({@link nameProblem} unless told); values left `undefined` are not given and not checked.
 */
export const refuseBadNames = (
  where: FieldError['in'],
  names: Readonly<Record<string, string | undefined>>,
  rule: (name: string) => string | undefined = nameProblem,
): void => {
  const errors: FieldError[] = [];
  for (const [field, name] of Object.entries(names)) {
    const message = name === undefined ? undefined : rule(name);
    if (message) errors.push({ in: where, field, message });
  }
  if (errors.length) throw new BadRequest(`The request is invalid: ${describeFieldErrors(errors)}.`, errors);
};

/** A path segment as API Gateway passes it (still percent-encoded), decoded; `undefined` when it does not decode. */
export const decodeSegment = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};

/**
 * The name a path parameter holds: API Gateway REST APIs pass path parameters still
 * percent-encoded (`edge%20router`), so it is decoded once, then checked by `rule`; a 400 naming
 * the parameter when it does not decode or breaks the rule.
 */
export const nameFromPath = (raw: string, field: string, rule: (name: string) => string | undefined): string => {
  const name = decodeSegment(raw);
  refuseBadNames('path', { [field]: name ?? raw }, (n) => (name === undefined ? 'is not valid percent-encoding' : rule(n)));
  return name!;
};

/**
 * A path parameter's schema when it carries a name: the encoded text, which is longer than the
 * name (a character is up to 12 encoded characters, `%F0%9F%98%80`); the handler decodes it and
 * applies the name's own rule ({@link nameFromPath}).
 */
export const encodedNameSchema = (maxChars: number, description: string) =>
  ({ type: 'string', minLength: 1, maxLength: maxChars * 12, description: `${description} (percent-encoded in the URL)` }) as const;
