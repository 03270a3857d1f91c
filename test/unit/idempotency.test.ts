/**
 * The pure parts of idempotent retries: reading the key, the request fingerprint, canonical
 * JSON, and what is kept of an answer.
 */
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../functions/platform/canonical-json.js';
import { MAX_STORED_RESPONSE_BYTES, callerOf, idempotencyKey, recordKey, requestFingerprint, toStored } from '../../functions/platform/idempotency.js';
import { BadRequest } from '../../functions/platform/problem.js';
import { apiEvent } from '../../tools/simulators/api-events.js';

/** A fingerprint key, as a stack would have. */
const KEY = randomBytes(32);

const headers = (value: string | undefined, all?: string[]) => ({
  headers: value === undefined ? {} : { 'idempotency-key': value },
  multiValueHeaders: all ? { 'idempotency-key': all } : {},
});

describe('idempotencyKey', () => {
  it('is undefined without the header', () => {
    expect(idempotencyKey(headers(undefined))).toBeUndefined();
  });

  it.each([
    ['abc', 'abc'],
    ['  padded  ', 'padded'],
    ['"quoted"', 'quoted'],
    ['"with \\"escapes\\" and \\\\"', 'with "escapes" and \\'],
    ['a b', 'a b'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
  ])('reads %s as %s', (raw, key) => {
    expect(idempotencyKey(headers(raw))).toBe(key);
  });

  it.each(['', '""', '"a\\b"', '"a"b"', 'é', 'tab\there', 'x'.repeat(256)])('refuses %j with a 400 naming the header', (raw) => {
    const error = (() => {
      try {
        idempotencyKey(headers(raw));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'header', field: 'Idempotency-Key' })]);
  });

  it('refuses two different values, and accepts the same value twice', () => {
    expect(() => idempotencyKey(headers('a', ['a', 'b']))).toThrow(BadRequest);
    expect(idempotencyKey(headers('a', ['a', 'a']))).toBe('a');
  });

  it('accepts every string of 1 to 255 printable ASCII characters that does not look quoted, unchanged', () => {
    const key = fc
      .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 255 })
      .filter((k) => !k.startsWith('"'));
    fc.assert(fc.property(key, (k) => idempotencyKey(headers(k)) === k));
  });
});

describe('scoping and fingerprints', () => {
  it('takes the caller from the authorizer, preferring principal over principalId', () => {
    expect(callerOf(apiEvent({ method: 'GET', resource: '/', authorizer: { principal: 'alice', principalId: 'x' } }))).toBe('alice');
    expect(callerOf(apiEvent({ method: 'GET', resource: '/', authorizer: { principalId: 'bob' } }))).toBe('bob');
    expect(callerOf(apiEvent({ method: 'GET', resource: '/', authorizer: {} }))).toBe('anonymous');
  });

  it('scopes a key to operation and caller without storing the caller as is', () => {
    const a = recordKey('createTree', 'alice', 'k');
    expect(a).not.toBe(recordKey('createTree', 'bob', 'k'));
    expect(a).not.toBe(recordKey('relayRestAction', 'alice', 'k'));
    expect(a).not.toContain('alice');
    expect(a.endsWith('#k')).toBe(true);
  });

  const base = { httpMethod: 'POST', resource: '/r/{id}', path: '/r/1', pathParameters: { id: '1' } };
  it('ignores member order, and tells apart method, resource, path parameters and body', () => {
    const fingerprint = requestFingerprint({ ...base, body: { a: 1, b: [1, { c: 2, d: 3 }] } }, KEY);
    expect(requestFingerprint({ ...base, body: { b: [1, { d: 3, c: 2 }], a: 1 } }, KEY)).toBe(fingerprint);
    expect(requestFingerprint({ ...base, httpMethod: 'PUT', body: { a: 1, b: [1, { c: 2, d: 3 }] } }, KEY)).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, pathParameters: { id: '2' }, body: { a: 1, b: [1, { c: 2, d: 3 }] } }, KEY)).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, body: { a: 1, b: [{ c: 2, d: 3 }, 1] } }, KEY)).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, body: undefined }, KEY)).toBe(requestFingerprint({ ...base, body: null }, KEY));
  });
});

describe('canonicalJson', () => {
  it('is JSON that parses back to the same value, whatever the member order', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        const shuffled = JSON.parse(JSON.stringify(value), (_k, v: unknown) =>
          v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        ) as unknown;
        expect(canonicalJson(shuffled)).toBe(text);
      }),
    );
  });
});

describe('toStored', () => {
  it('keeps status, headers and a compressed body', () => {
    const stored = toStored({ statusCode: 201, headers: { 'Content-Type': 'application/json', Location: '/x' }, body: '{"a":1}'.repeat(1000) });
    expect(stored.statusCode).toBe(201);
    expect(stored.headers).toEqual({ 'Content-Type': 'application/json', Location: '/x' });
    expect(stored.body!.length).toBeLessThan(7000);
  });

  it('keeps no body when even compressed it is too large for a DynamoDB item', () => {
    const noise = randomBytes(MAX_STORED_RESPONSE_BYTES * 2).toString('base64');
    const stored = toStored({ statusCode: 200, headers: {}, body: noise });
    expect(stored.body).toBeUndefined();
    expect(stored.statusCode).toBe(200);
  });
});

describe('idempotencyKey: edges and wording', () => {
  const refusal = (event: Parameters<typeof idempotencyKey>[0]) => {
    try {
      idempotencyKey(event);
    } catch (e) {
      return (e as BadRequest).toBody() as unknown as { detail: string; errors: { message: string }[] };
    }
    throw new Error('accepted');
  };

  // API Gateway gives null for the header maps of a request without headers.
  const event = (headerMap: unknown, multiValueHeaders: unknown = null) =>
    ({ headers: headerMap, multiValueHeaders }) as unknown as Parameters<typeof idempotencyKey>[0];

  it('reads no key from an event without headers, or with the header null', () => {
    expect(idempotencyKey(event(null))).toBeUndefined();
    expect(idempotencyKey(event({ 'idempotency-key': null }))).toBeUndefined();
    expect(idempotencyKey(event({ 'idempotency-key': 'k' }))).toBe('k');
  });

  it.each(['"', 'a"', '"a', 'x"y"'])('takes %j as it is: quoted only when it starts and ends with a quote', (raw) => {
    expect(idempotencyKey(headers(raw))).toBe(raw);
  });

  it('accepts 255 characters and refuses 256', () => {
    expect(idempotencyKey(headers('k'.repeat(255)))).toBe('k'.repeat(255));
    expect(refusal(headers('k'.repeat(256))).errors[0]!.message).toBe('must be at most 255 characters');
  });

  it.each<[string, Parameters<typeof idempotencyKey>[0], string]>([
    ['empty', headers(''), 'must not be empty'],
    ['empty once unquoted', headers('""'), 'must not be empty'],
    ['a bad quoted string', headers('"a\\b"'), 'is not a valid quoted string'],
    ['not printable ASCII', headers('clé'), 'must be printable ASCII characters only'],
    ['sent twice', headers('a', ['a', 'b']), 'must be sent once'],
  ])('says why a key that is %s is refused', (_label, event, message) => {
    const body = refusal(event);
    expect(body.errors).toEqual([{ in: 'header', field: 'Idempotency-Key', message }]);
    expect(body.detail).toBe(`The Idempotency-Key header ${message}.`);
  });
});

describe('callerOf and requestFingerprint: edges', () => {
  it('takes an empty principal, or none, as anonymous', () => {
    expect(callerOf(apiEvent({ method: 'GET', resource: '/', authorizer: { principal: '' } }))).toBe('anonymous');
    expect(callerOf(apiEvent({ method: 'GET', resource: '/', authorizer: { principal: 7 } as never }))).toBe('anonymous');
  });

  it('tells requests apart by their resource, and by their path only when there is no resource', () => {
    const event = { httpMethod: 'POST', pathParameters: null, body: null };
    expect(requestFingerprint({ ...event, resource: '/a/{id}', path: '/a/1' }, KEY)).toBe(
      requestFingerprint({ ...event, resource: '/a/{id}', path: '/a/2' }, KEY),
    );
    expect(requestFingerprint({ ...event, resource: '/a/{id}', path: '/a/1' }, KEY)).not.toBe(
      requestFingerprint({ ...event, resource: '/b/{id}', path: '/a/1' }, KEY),
    );
    expect(requestFingerprint({ ...event, resource: '', path: '/a/1' }, KEY)).not.toBe(requestFingerprint({ ...event, resource: '', path: '/a/2' }, KEY));
  });
});

describe('toStored: the size limit', () => {
  /** A body whose compressed size is exactly `bytes`: text of a fixed noise, cut to the length that compresses to it. */
  const bodyCompressingTo = (bytes: number): string => {
    const noise = Buffer.from(Array.from({ length: 2 * bytes }, (_, i) => String.fromCharCode(33 + ((i * 7919 + ((i * i) % 8191)) % 94))).join(''));
    const size = (n: number) => gzipSync(noise.subarray(0, n)).length;
    let low = 0;
    let high = noise.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (size(mid) < bytes) low = mid + 1;
      else high = mid;
    }
    expect(size(low)).toBe(bytes);
    return noise.subarray(0, low).toString('utf8');
  };

  it('keeps a body that compresses to the limit exactly, and none a byte over', () => {
    expect(toStored({ statusCode: 200, headers: {}, body: bodyCompressingTo(MAX_STORED_RESPONSE_BYTES) }).body).toHaveLength(MAX_STORED_RESPONSE_BYTES);
    expect(toStored({ statusCode: 200, headers: {}, body: bodyCompressingTo(MAX_STORED_RESPONSE_BYTES + 1) }).body).toBeUndefined();
  });
});
