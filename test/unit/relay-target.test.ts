import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidBaseUrl, adapterOrigin, buildTarget, checkRelayPath } from '../../functions/relay/target.js';
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

  it('explains what is wrong', () => {
    expect(checkRelayPath('http://x/')).toMatch(/must start with "\/"/);
    expect(checkRelayPath('/a/../b')).toMatch(/dot segments/);
    expect(checkRelayPath('/a%2fb')).toMatch(/encoded/);
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
      fc.property(fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join('')), (tail) => {
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
      }),
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

  it('never puts the URL in its message (it could carry credentials)', () => {
    expect(() => adapterOrigin('https://user:s3cret@nso.example.net')).toThrow(/^(?!.*s3cret)/);
  });
});
