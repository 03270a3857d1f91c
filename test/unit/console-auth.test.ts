import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  apiBaseOf,
  authorizeUrl,
  base64Url,
  callbackCode,
  codeChallenge,
  displayName,
  jwtPayload,
  randomToken,
  redirectUriOf,
  refreshDelay,
  rolesOf,
} from '../../console/src/pkce.js';

const jwt = (payload: unknown): string =>
  `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

describe('console PKCE', () => {
  it('derives the S256 challenge of RFC 7636 appendix B', async () => {
    expect(await codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes verifiers of 43 URL-safe characters that differ each time', () => {
    const a = randomToken();
    const b = randomToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it('encodes base64url without padding, as Node does', () => {
    const bytes = new Uint8Array([251, 255, 191, 0, 1]);
    expect(base64Url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    const digest = createHash('sha256').update('x').digest();
    expect(base64Url(new Uint8Array(digest))).toBe(digest.toString('base64url'));
  });
});

describe('console ID token reading', () => {
  it('decodes the payload, UTF-8 included', () => {
    expect(jwtPayload(jwt({ sub: 'u1', name: 'Zoë', 'cognito:groups': ['admin'] }))).toEqual({ sub: 'u1', name: 'Zoë', 'cognito:groups': ['admin'] });
  });

  it('answers undefined for what is not a JWT', () => {
    expect(jwtPayload('abc')).toBeUndefined();
    expect(jwtPayload('a.b')).toBeUndefined();
    expect(jwtPayload('a.!!!.c')).toBeUndefined();
    expect(jwtPayload(`a.${Buffer.from('[1]').toString('base64url')}.c`)).toBeUndefined();
  });

  it('reads roles from a list or a separated string', () => {
    expect(rolesOf(['admin', 3, 'apiread'])).toEqual(['admin', 'apiread']);
    expect(rolesOf('admin apiread,ops')).toEqual(['admin', 'apiread', 'ops']);
    expect(rolesOf(undefined)).toEqual([]);
  });

  it('names the user by the first claim present', () => {
    expect(displayName({ sub: 's', email: 'e@x', 'cognito:username': 'cu' })).toBe('cu');
    expect(displayName({ sub: 's' })).toBe('s');
    expect(displayName({})).toBe('unknown user');
  });
});

describe('console refresh timing', () => {
  it('refreshes a minute before expiry', () => {
    expect(refreshDelay(1_000_3600, 1_000_0000, 1_000_0000 * 1000)).toBe((3600 - 60) * 1000);
  });

  it('refreshes halfway through a short-lived token, and at once when late', () => {
    expect(refreshDelay(100, 0, 0)).toBe(50_000);
    expect(refreshDelay(100, 0, 200_000)).toBe(0);
  });
});

describe('console addresses', () => {
  it('takes the redirect URI from the page without query or fragment, and the API base from its path', () => {
    expect(redirectUriOf({ origin: 'https://api.example.com', pathname: '/v1/console' })).toBe('https://api.example.com/v1/console');
    expect(apiBaseOf('/v1/console')).toBe('/v1');
    expect(apiBaseOf('/v1/console/')).toBe('/v1');
    expect(apiBaseOf('/console')).toBe('');
  });
});

describe('console authorization request and callback', () => {
  const settings = { authorizationEndpoint: 'https://auth.example.com/oauth2/authorize?lang=en', clientId: 'client-1', scopes: ['openid', 'email'] };

  it('asks for a code with an S256 challenge, the state and the exact redirect URI', () => {
    const url = new URL(authorizeUrl(settings, { redirectUri: 'https://api.example.com/v1/console', state: 's1', challenge: 'c1' }));
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.com/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'client-1',
      redirect_uri: 'https://api.example.com/v1/console',
      scope: 'openid email',
      state: 's1',
      code_challenge: 'c1',
      code_challenge_method: 'S256',
    });
  });

  const pending = { state: 's1', verifier: 'v1', hash: '#/trees' };

  it('answers the code and verifier when the state matches', () => {
    expect(callbackCode(new URLSearchParams('code=k&state=s1'), pending)).toEqual({ code: 'k', verifier: 'v1' });
  });

  it('refuses a state that does not match, or a callback this tab did not start', () => {
    expect(() => callbackCode(new URLSearchParams('code=k&state=other'), pending)).toThrow(/state does not match/);
    expect(() => callbackCode(new URLSearchParams('code=k'), pending)).toThrow(/state does not match/);
    expect(() => callbackCode(new URLSearchParams('code=k&state=s1'), undefined)).toThrow(/state does not match/);
  });

  it("reports the provider's error code, never text from the address", () => {
    expect(() => callbackCode(new URLSearchParams('error=access_denied&error_description=User+said+no&state=s1'), pending)).toThrow(
      'The identity provider refused the sign-in (access_denied). Sign in again.',
    );
    // Anyone can write a link to the console: its free text is not shown as the console's words.
    const forged = () => callbackCode(new URLSearchParams('error=Session+expired,+call+%2B1-555&error_description=Call+us&state=s1'), pending);
    expect(forged).toThrow('The identity provider refused the sign-in. Sign in again.');
  });
});
