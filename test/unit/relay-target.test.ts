import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidBaseUrl, adapterOrigin, buildTarget, checkRelayPath, targetOnOrigin } from '../../functions/outbound/target.js';
import { REFUSED_PATHS } from '../support/relay-paths.js';

describe('checkRelayPath', () => {
  it.each([
    '/restconf/data',
    '/restconf/data/tailf-ncs:devices/device=ce0/config',
    '/restconf/data/tailf-ncs:devices/device=ce0,ce1',
    '/restconf/data/tailf-ncs:devices?depth=2',
    '/restconf/data/tailf-ncs:devices?fields=device(name;address)&depth=3',
    '/restconf/data/x/interface=Loopback%200',
    '/api/running/devices/device/ce0/_operations/sync-from',
    '/restconf/data/a...b/.hidden/..x',
    '/',
  ])('accepts %s', (path) => {
    expect(checkRelayPath(path)).toBeUndefined();
  });

  it.each(REFUSED_PATHS)('refuses %s', (_label, path) => {
    expect(checkRelayPath(path)).toEqual(expect.any(String));
  });

  const ENCODED = 'must not contain encoded dots, slashes, backslashes, percent signs or control characters (%2e, %2f, %5c, %25, %00-%1f, %7f)';
  it.each([
    ['/restconf/data\r\nHost: evil.example', 'must not contain control characters'],
    ['/a\u0000', 'must not contain control characters'],
    ['/a\u007f', 'must not contain control characters'],
    ['/a\t', 'must not contain control characters'],
    ['http://x/', 'must start with "/" (a path on the orchestrator, not a URL)'],
    ['restconf/data', 'must start with "/" (a path on the orchestrator, not a URL)'],
    ['', 'must start with "/" (a path on the orchestrator, not a URL)'],
    ['//evil.example/x', 'must not start with "//" (that names another host)'],
    ['/restconf\\..\\admin', 'must not contain backslashes'],
    ['/@evil.example/', 'must not contain "@"'],
    ['/restconf/data#x', 'must not contain a fragment ("#")'],
    ['/a b', 'contains a character that must be percent-encoded'],
    ['/{x}', 'contains a character that must be percent-encoded'],
    ['/déviće', 'contains a character that must be percent-encoded'],
    ['/a%zz', 'contains a "%" that does not start a percent-encoded byte'],
    ['/a%2', 'contains a "%" that does not start a percent-encoded byte'],
    ['/a%4g', 'contains a "%" that does not start a percent-encoded byte'],
    ['/a%', 'contains a "%" that does not start a percent-encoded byte'],
    ['/a%2fb', ENCODED],
    ['/a%2E', ENCODED],
    ['/a%252e', ENCODED],
    ['/a%5C', ENCODED],
    ['/a%0d%0a', ENCODED],
    ['/a%1F', ENCODED],
    ['/a%7f', ENCODED],
    ['/a/../b', 'must not contain dot segments ("/./" or "/../")'],
    ['/a/.', 'must not contain dot segments ("/./" or "/../")'],
  ])('explains what is wrong with %j: %s', (path, reason) => {
    expect(checkRelayPath(path)).toBe(reason);
  });

  it.each(['/a%41%7E%20b', '/x?q=%3d%3D', '/%20'])('accepts the well-formed percent-encoded bytes of %s', (path) => {
    expect(checkRelayPath(path)).toBeUndefined();
  });
});

describe('buildTarget', () => {
  const origin = new URL('https://nso.example.net:8888');

  it('keeps the adapter origin and the path (and query) exactly as given', () => {
    expect(buildTarget(origin, '/restconf/data/tailf-ncs:devices?depth=1')).toEqual({ origin, path: '/restconf/data/tailf-ncs:devices?depth=1' });
  });

  it.each(REFUSED_PATHS)('refuses %s', (_label, path) => {
    expect(buildTarget(origin, path)).toBeUndefined();
  });

  it('never yields another origin, whatever the path', () => {
    const alphabet = fc.constantFrom('/', '.', '%', '2', 'e', 'f', '5', 'c', '\\', '@', ':', '?', '#', 'a', '=', ';', '&', ' ', '\n', '0');
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join('')),
        (tail) => {
          const path = `/${tail}`;
          const target = buildTarget(origin, path);
          if (!target) {
            refused++;
            return;
          }
          accepted++;
          const url = new URL(`${target.origin.origin}${target.path}`);
          expect(url.origin).toBe(origin.origin);
          // No dot segment survived (the parser would have removed it, changing the path).
          expect(url.pathname).toBe(path.split('?')[0]);
        },
      ),
      { numRuns: 2000 },
    );
    // The property says something only if many generated paths got through (about three in
    // ten do) and many did not: a buildTarget that refused everything would fail here.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('accepts every path of plain segments, with or without a query, and keeps it exactly', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_~:=,;!$'()*+-][A-Za-z0-9._~:=,;!$'()*+-]{0,15}$/).filter((s) => s !== '.' && s !== '..');
    const query = fc.option(fc.stringMatching(/^[A-Za-z0-9=&;,_.~()-]{0,20}$/), { nil: undefined });
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), query, (segments, q) => {
        const path = `/${segments.join('/')}${q === undefined ? '' : `?${q}`}`;
        expect(checkRelayPath(path)).toBeUndefined();
        expect(buildTarget(origin, path)).toEqual({ origin, path });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('targetOnOrigin, the second guard', () => {
  const origin = new URL('https://nso.example.net:8888');

  // Paths the first guard refuses, given to the second directly: each is one a URL parser
  // would rewrite (dot segments, backslashes, spaces, non-ASCII, a fragment), so the parsed
  // URL no longer says what the caller sent and the target is refused rather than sent.
  it.each(['/a/../b', '/a/./b', '/a/%2e%2e/b', '/a/.%2E/b', '/a\\b', '/a b', '/déviće', '/a#b', '/a/..?x=1'])('refuses %s, which a parser rewrites', (path) => {
    expect(checkRelayPath(path)).toEqual(expect.any(String));
    expect(targetOnOrigin(origin, path)).toBeUndefined();
  });

  it('refuses what does not start a path on the origin', () => {
    expect(targetOnOrigin(new URL('https://nso.example.net'), '.evil.example/x')).toBeUndefined();
    expect(targetOnOrigin(origin, '?x=1')).toBeUndefined();
  });

  it('keeps a path the parser leaves as it is', () => {
    expect(targetOnOrigin(origin, '/restconf/data/a...b?depth=1')).toEqual({ origin, path: '/restconf/data/a...b?depth=1' });
    expect(targetOnOrigin(origin, '//other.example/x')).toEqual({ origin, path: '//other.example/x' });
  });
});

describe('adapterOrigin', () => {
  it.each(['https://nso.example.net', 'https://nso.example.net/', 'http://10.0.0.5:8080'])('accepts %s', (baseUrl) => {
    expect(adapterOrigin(baseUrl).origin).toBe(new URL(baseUrl).origin);
  });

  it.each(['nso.example.net', 'ftp://nso.example.net', 'https://user:pw@nso.example.net', 'https://nso.example.net/restconf', 'https://nso.example.net?x=1'])(
    'refuses %s',
    (baseUrl) => {
      expect(() => adapterOrigin(baseUrl)).toThrow(InvalidBaseUrl);
    },
  );

  it.each([
    ['nso.example.net', 'baseUrl is not a URL'],
    ['ftp://nso.example.net', 'baseUrl is not http or https'],
    ['https://user:pw@nso.example.net', 'baseUrl carries credentials'],
    ['https://user@nso.example.net', 'baseUrl carries credentials'],
    ['https://:pw@nso.example.net', 'baseUrl carries credentials'],
    ['https://nso.example.net/restconf', 'baseUrl has a path, query or fragment'],
    ['https://nso.example.net?x=1', 'baseUrl has a path, query or fragment'],
    ['https://nso.example.net/#top', 'baseUrl has a path, query or fragment'],
  ])('says why %s is refused: %s', (baseUrl, reason) => {
    expect(() => adapterOrigin(baseUrl)).toThrow(new InvalidBaseUrl(reason));
  });

  it('never puts the URL in its message (it could carry credentials)', () => {
    expect(() => adapterOrigin('https://user:s3cret@nso.example.net')).toThrow(/^(?!.*s3cret)/);
  });
});
