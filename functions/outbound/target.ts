/**
 * Where the relay may send a request. Two independent guards keep it on the adapter's own
 * orchestrator:
 *
 * 1. {@link checkRelayPath} / {@link buildTargetUrl}: `params.path` can only ever name a path
 *    (and query) on the adapter's origin. Anything a URL parser, a proxy or the orchestrator
 *    could read as another host, another scheme, credentials or a climb out of the path is
 *    refused before any byte is sent.
 * 2. `addressRefusal` (functions/outbound/address-policy.ts): the address actually connected to (after DNS) is never a
 *    link-local or cloud metadata address, nor loopback outside local mode. This catches a
 *    hostname that resolves (or is re-pointed, DNS rebinding) to such an address.
 */

/** Why a `params.path` is refused, as the 400's field message; `undefined` when it is fine. */
export const checkRelayPath = (path: string): string | undefined => {
  // Control characters (C0, DEL) first: CR/LF could split the request line, NUL truncates.
  if (/[\x00-\x1f\x7f]/.test(path)) return 'must not contain control characters';
  if (!path.startsWith('/')) return 'must start with "/" (a path on the orchestrator, not a URL)';
  if (path.startsWith('//')) return 'must not start with "//" (that names another host)';
  if (path.includes('\\')) return 'must not contain backslashes';
  if (path.includes('@')) return 'must not contain "@"';
  if (path.includes('#')) return 'must not contain a fragment ("#")';
  // Whatever is left must be RFC 3986 path and query characters: no spaces, quotes, braces or
  // non-ASCII that a parser would re-encode behind our back.
  if (!/^[A-Za-z0-9\-._~!$&'()*+,;=:/?%]*$/.test(path)) {
    return 'contains a character that must be percent-encoded';
  }
  const malformed = /%(?![0-9A-Fa-f]{2})/.exec(path);
  if (malformed) return 'contains a "%" that does not start a percent-encoded byte';
  // Encoded dots, slashes, backslashes and percent signs are how traversal hides from a
  // check like ours; encoded control characters are how header injection does.
  if (/%(?:2e|2f|5c|25|[01][0-9a-f]|7f)/i.test(path)) {
    return 'must not contain encoded dots, slashes, backslashes, percent signs or control characters (%2e, %2f, %5c, %25, %00-%1f, %7f)';
  }
  const queryAt = path.indexOf('?');
  const pathPart = queryAt === -1 ? path : path.slice(0, queryAt);
  if (pathPart.split('/').some((segment) => segment === '.' || segment === '..')) {
    return 'must not contain dot segments ("/./" or "/../")';
  }
  return undefined;
};

/** Thrown when an adapter's `baseUrl` is not an http(s) origin: damaged data, never user input. */
export class InvalidBaseUrl extends Error {}

/**
 * The adapter's origin (`scheme://host[:port]`): an http or https URL without credentials,
 * path, query or fragment.
 */
export const adapterOrigin = (baseUrl: string): URL => {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InvalidBaseUrl('baseUrl is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidBaseUrl('baseUrl is not http or https');
  if (url.username || url.password) throw new InvalidBaseUrl('baseUrl carries credentials');
  // Mutation: `url.pathname !== ''` → `true` (and its string) is equivalent: the WHATWG parser gives every http(s)
  // URL a path of at least `/`.
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new InvalidBaseUrl('baseUrl has a path, query or fragment');
  }
  return new URL(url.origin);
};

/** Where one request goes: the adapter's origin and the request target sent verbatim. */
export interface Target {
  readonly origin: URL;
  /** Path and query exactly as `params.path` gave them. */
  readonly path: string;
}

/**
 * The outgoing target: the adapter's origin and a path that {@link checkRelayPath} accepted.
 * The concatenation is parsed once more as defence in depth: if a URL parser read another
 * origin into it, or normalised its path, it is refused rather than sent.
 */
export const buildTarget = (origin: URL, path: string): Target | undefined => (checkRelayPath(path) === undefined ? targetOnOrigin(origin, path) : undefined);

/**
 * {@link buildTarget} for a path that {@link checkRelayPath} has already accepted (the relay
 * checks each request's path once): only the parse of the concatenation is left.
 */
export const targetOnOrigin = (origin: URL, path: string): Target | undefined => {
  const url = new URL(`${origin.origin}${path}`);
  const queryAt = path.indexOf('?');
  const pathPart = queryAt === -1 ? path : path.slice(0, queryAt);
  // Mutation: the origin check → `false` is equivalent: a parsed path equal to the one given starts with `/`, which
  // ends the authority, so the path check catches everything it would.
  if (url.origin !== origin.origin || url.pathname !== pathPart || url.username || url.password) return undefined;
  return { origin, path };
};
