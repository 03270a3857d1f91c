import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adapterNameFromPath, checkBaseUrl, encErrors, isAdapterName, normalizeBaseUrl, withEncRejection } from '../../functions/adapters/validate.js';
import type { CompiledValidator } from '../../functions/runtime/http.js';
import { BadRequest } from '../../functions/platform/problem.js';

describe('adapter names', () => {
  it.each(['nso', 'NSO lab 1', 'a', 'a.b_c-d', '...', 'x'.repeat(128)])('accepts %j', (name) => {
    expect(isAdapterName(name)).toBe(true);
  });

  it.each(['', 'x'.repeat(129), 'a/b', 'a+b', 'a@b', 'ünï', 'a\tb', '.', '..', 'a%20b'])('refuses %j', (name) => {
    expect(isAdapterName(name)).toBe(false);
  });

  it('decodes a percent-encoded path parameter once', () => {
    expect(adapterNameFromPath('nso%20lab')).toBe('nso lab');
    expect(adapterNameFromPath('nso lab')).toBe('nso lab');
  });

  it.each(['a%2Fb', 'a%40b', '%E0%A4%A', 'a%2520b', undefined])('answers 400 naming the parameter for %j', (raw) => {
    const error = (() => {
      try {
        adapterNameFromPath(raw);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'path', field: 'name' })]);
  });

  it('names the relay parameter when asked', () => {
    expect(() => adapterNameFromPath('a/b', 'adapterId')).toThrow(/adapterId/);
  });

  it('round-trips every valid name through encodeURIComponent', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9 ._-]{1,128}$/).filter(isAdapterName), (name) => {
        expect(adapterNameFromPath(encodeURIComponent(name))).toBe(name);
      }),
    );
  });
});

describe('baseUrl', () => {
  const remote = { allowLoopback: false };
  const local = { allowLoopback: true };

  it.each([
    ['https://nso.example.net:8888', 'https://nso.example.net:8888'],
    ['https://nso.example.net:8888/', 'https://nso.example.net:8888'],
    ['HTTPS://NSO.Example.NET', 'https://nso.example.net'],
    ['http://10.0.0.5:8080', 'http://10.0.0.5:8080'],
    ['https://nso.example.net:443/', 'https://nso.example.net'],
    ['http://[2001:db8::10]:8080', 'http://[2001:db8::10]:8080'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['http://192.168.1.1', 'http://192.168.1.1'],
  ])('accepts %s as %s', (raw, origin) => {
    expect(checkBaseUrl(raw, remote)).toEqual({ origin });
  });

  it.each([
    ['ftp://nso.example.net', 'http(s)'],
    ['nso.example.net', 'http(s)'],
    ['https:nso.example.net', 'http(s)'],
    ['https://nso.example.net/restconf', 'no path'],
    ['https://nso.example.net//', 'no path'],
    ['https://nso.example.net/?a=1', 'no path'],
    ['https://nso.example.net?a=1', 'no path'],
    ['https://nso.example.net#x', 'no path'],
    ['https://admin:pw@nso.example.net', 'credentials'],
    ['https://@nso.example.net', 'credentials'],
    ['https://nso.example.net\\', 'no path'],
    ['https://nso.exa mple.net', 'no path'],
    ['https://', 'no host'],
    ['https:///x', 'no path'],
    ['https://nso.example.net:0', 'port 0'],
    ['https://nso.example.net:99999', 'not a valid URL'],
    ['http://169.254.169.254', 'metadata'],
    ['http://[fd00:ec2::254]', 'metadata'],
    ['http://100.100.100.200', 'metadata'],
    ['http://metadata.google.internal', 'metadata'],
    ['http://metadata.google.internal.', 'metadata'],
    ['http://METADATA.GOOGLE.INTERNAL', 'metadata'],
    ['http://169.254.10.1', 'link-local'],
    ['http://[fe80::1]', 'link-local'],
    ['http://[febf::1]', 'link-local'],
    ['http://0.0.0.0', 'unspecified'],
    ['http://0', 'unspecified'],
    ['http://[::]', 'unspecified'],
    ['http://224.0.0.1', 'multicast'],
    ['http://255.255.255.255', 'broadcast'],
    ['http://127.0.0.1:8080', 'loopback'],
    ['http://127.1.2.3', 'loopback'],
    ['http://2130706433', 'loopback'],
    ['http://0x7f.1', 'loopback'],
    ['http://[::1]', 'loopback'],
    ['http://[::ffff:127.0.0.1]', 'loopback'],
    ['http://[::ffff:169.254.169.254]', 'metadata'],
    ['http://[64:ff9b::a9fe:a9fe]', 'metadata'],
    ['http://localhost:8080', 'loopback'],
    ['http://nso.localhost', 'loopback'],
  ])('refuses %s (%s)', (raw, reason) => {
    const result = checkBaseUrl(raw, remote);
    expect(result).toHaveProperty('problem');
    expect((result as { problem: string }).problem).toContain(reason);
  });

  it('allows loopback in local mode, but still refuses metadata and link-local there', () => {
    expect(checkBaseUrl('http://127.0.0.1:8080', local)).toEqual({ origin: 'http://127.0.0.1:8080' });
    expect(checkBaseUrl('http://localhost:8080/', local)).toEqual({ origin: 'http://localhost:8080' });
    expect(checkBaseUrl('http://[::1]:9', local)).toEqual({ origin: 'http://[::1]:9' });
    expect(checkBaseUrl('http://169.254.169.254', local)).toHaveProperty('problem');
    expect(checkBaseUrl('http://[fe80::1]', local)).toHaveProperty('problem');
    expect(checkBaseUrl('http://0.0.0.0', local)).toHaveProperty('problem');
  });

  it('answers 400 naming baseUrl', () => {
    try {
      normalizeBaseUrl('http://169.254.169.254', remote);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequest);
      expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'body', field: 'baseUrl' })]);
    }
  });
});

describe('$ENC rejection', () => {
  it('finds $ENC strings at any depth, with JSON pointers', () => {
    const errors = encErrors({ a: '$ENC(x)', b: { 'c/d': ['ok', '  $ENCy'] }, e: 1 }, '/body');
    expect(errors.map((e) => e.instancePath)).toEqual(['/body/a', '/body/b/c~1d/1']);
    expect(errors[0]!.message).toContain('$ENC was removed in 2021.2');
    expect(errors[0]!.message).toContain('$VAULT_<path>#<key>');
  });

  const schemaValidator = (): CompiledValidator => {
    const validate: CompiledValidator = (event: unknown) => {
      const body = (event as { body?: Record<string, unknown> }).body ?? {};
      const extra = Object.keys(body).filter((k) => k !== 'auth');
      validate.errors = extra.map((k) => ({ instancePath: '/body', keyword: 'additionalProperties', params: { additionalProperty: k }, message: 'x' }));
      return extra.length === 0;
    };
    return validate;
  };

  it('reports $ENC before, and along with, any schema error', () => {
    const validate = withEncRejection(schemaValidator());
    expect(validate({ body: { auth: '$ENC(1)', extra: '$ENC(2)' } })).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toEqual(['enc', 'enc', 'additionalProperties']);
  });

  it('passes through the schema result when there is no $ENC', () => {
    const validate = withEncRejection(schemaValidator());
    expect(validate({ body: { auth: 'fine' } })).toBe(true);
    expect(validate({ body: { other: 'x' } })).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toEqual(['additionalProperties']);
  });
});
