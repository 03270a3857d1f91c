/**
 * The one rule for names that appear as URL path segments (adapters, tree nodes, new version
 * labels): 1 to 128 letters, digits, spaces, `-`, `_`, `.`; `.` and `..` alone are not names
 * (they are path steps). A valid name has no `%`, so decoding a path segment once is always safe.
 */
export const NAME_RULE = 'must be 1 to 128 letters, digits, spaces, "-", "_" or "." (and not "." or "..")';
const NAME = /^[A-Za-z0-9 ._-]{1,128}$/;

/** True when `name` meets {@link NAME_RULE}. */
export const isPathName = (name: string): boolean => NAME.test(name) && name !== '.' && name !== '..';

/** A path segment as API Gateway passes it (still percent-encoded), decoded; `undefined` when it does not decode. */
export const decodeSegment = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};
