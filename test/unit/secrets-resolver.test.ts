import { describe, expect, it } from 'vitest';
import { withAccess, type SecretData, type SecretsBackend } from '../../functions/outbound/secrets/backend.js';
import { SecretMissing, SecretReferenceInvalid, SecretsUnavailable } from '../../functions/outbound/secrets/errors.js';
import { ENC_REMOVED } from '../../functions/outbound/secrets/reference.js';
import { createSecretResolver, readReference } from '../../functions/outbound/secrets/resolve.js';

/** A backend over a map, counting reads; `down` makes it fail like an unreachable store. */
const memoryBackend = (initial: Record<string, SecretData> = {}) => {
  const data = new Map(Object.entries(initial));
  const state = { reads: 0, down: false, gate: undefined as Promise<void> | undefined };
  const backend: SecretsBackend = {
    kind: 'local',
    read: async (path) => {
      state.reads += 1;
      if (state.gate) await state.gate;
      if (state.down) throw new SecretsUnavailable();
      return data.get(path);
    },
    write: async (path, value) => void data.set(path, value),
    delete: async (path) => void data.delete(path),
    health: async () => undefined,
  };
  return { backend, data, state };
};

describe('readReference', () => {
  it('returns the value of the named key', async () => {
    const { backend } = memoryBackend({ 'team/nso': { password: 's3cret', other: 'x' } });
    await expect(readReference(backend, '$VAULT_team/nso')).resolves.toBe('s3cret');
    await expect(readReference(backend, '$VAULT_team/nso#other')).resolves.toBe('x');
  });

  it('fails with secret-missing when the secret does not exist', async () => {
    const { backend } = memoryBackend();
    const error = await readReference(backend, '$VAULT_team/none#password').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretMissing);
    expect((error as SecretMissing).status).toBe(500);
    expect((error as SecretMissing).toBody().type).toBe('urn:netconfig:problem:secret-missing');
    expect((error as SecretMissing).detail).toContain('$VAULT_team/none#password');
  });

  it('fails when the key is absent, empty or not a string: never an empty password', async () => {
    const { backend } = memoryBackend({ a: { password: '' }, b: { password: 42 }, c: { user: 'x' } });
    for (const ref of ['$VAULT_a', '$VAULT_b', '$VAULT_c']) {
      await expect(readReference(backend, ref)).rejects.toBeInstanceOf(SecretMissing);
    }
  });

  it('refuses a $ENC value without reading the store, saying it was removed in 2021.2', async () => {
    const { backend, state } = memoryBackend();
    const error = await readReference(backend, '$ENC(4f2a9c)').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretReferenceInvalid);
    expect((error as SecretReferenceInvalid).detail).toContain('$ENC was removed in 2021.2');
    expect((error as SecretReferenceInvalid).detail).toContain('$VAULT_<path>#<key>');
    expect((error as SecretReferenceInvalid).detail).not.toContain('4f2a9c');
    expect(state.reads).toBe(0);
  });

  it('never returns a literal password in place of a reference, nor echoes it', async () => {
    const { backend, state } = memoryBackend();
    const error = await readReference(backend, 'hunter2-literal').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretReferenceInvalid);
    expect((error as SecretReferenceInvalid).detail).not.toContain('hunter2');
    expect(state.reads).toBe(0);
  });

  it('names the canonical reference (the default key written out) and says what is wrong', async () => {
    const { backend } = memoryBackend({ a: { password: '' }, b: { password: 42 }, c: { user: 'x' }, d: {} });
    const detailOf = async (reference: string) => ((await readReference(backend, reference).catch((e: unknown) => e)) as SecretMissing).detail;
    expect(await detailOf('$VAULT_none')).toBe(
      'The secret that $VAULT_none#password refers to does not exist (never written, deleted or destroyed) in the secrets store; store it again or update the reference.',
    );
    expect(await detailOf('$VAULT_c')).toBe(
      'The secret that $VAULT_c#password refers to has no key "password" in the secrets store; store it again or update the reference.',
    );
    expect(await detailOf('$VAULT_c#other')).toContain('has no key "other"');
    expect(await detailOf('$VAULT_a')).toContain('$VAULT_a#password refers to is empty or not a string');
    expect(await detailOf('$VAULT_b')).toContain('is empty or not a string');
  });

  it("reads only the secret's own keys, never what every object inherits", async () => {
    const { backend } = memoryBackend({ a: { password: 'v' } });
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const error = await readReference(backend, `$VAULT_a#${key}`).catch((e: unknown) => e);
      expect(error, key).toBeInstanceOf(SecretMissing);
      expect((error as SecretMissing).detail, key).toContain(`has no key "${key}"`);
    }
  });

  it('says why a malformed reference is refused, and the form to use', async () => {
    const { backend } = memoryBackend();
    const error = (await readReference(backend, '$VAULT_a//b').catch((e: unknown) => e)) as SecretReferenceInvalid;
    expect(error.detail).toBe(
      'The configuration holds a secret that is not a valid $VAULT_ reference (the path has an empty segment (a leading, trailing or doubled "/")); replace it with "$VAULT_<path>#<key>".',
    );
    const enc = (await readReference(backend, '  $ENC:abc').catch((e: unknown) => e)) as SecretReferenceInvalid;
    expect(enc.detail).toBe(`The configuration holds a $ENC value. ${ENC_REMOVED}.`);
    expect(enc.detail).not.toContain('abc');
  });

  it('passes the store being down through as 503', async () => {
    const { backend, state } = memoryBackend();
    state.down = true;
    const error = await readReference(backend, '$VAULT_a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretsUnavailable);
    expect((error as SecretsUnavailable).status).toBe(503);
  });
});

describe('createSecretResolver', () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => void (t += ms) };
  };

  it('reuses a resolved value until the TTL passes, then reads again', async () => {
    const { backend, data, state } = memoryBackend({ a: { password: 'v1' } });
    const time = clock();
    const resolver = createSecretResolver({ backend, ttlMs: 60_000, now: time.now });
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('v1');
    data.set('a', { password: 'v2' });
    time.advance(59_999);
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('v1');
    expect(state.reads).toBe(1);
    time.advance(1);
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('v2');
    expect(state.reads).toBe(2);
  });

  it('shares one read among concurrent callers', async () => {
    const { backend, state } = memoryBackend({ a: { password: 'v' } });
    let open!: () => void;
    state.gate = new Promise<void>((resolve) => (open = resolve));
    const resolver = createSecretResolver({ backend });
    const all = Promise.all([resolver.resolve('$VAULT_a'), resolver.resolve('$VAULT_a'), resolver.resolve('$VAULT_a#password')]);
    open();
    expect(await all).toEqual(['v', 'v', 'v']);
    // '$VAULT_a' and '$VAULT_a#password' are cached under their own text.
    expect(state.reads).toBe(2);
  });

  it('does not cache failures: a missing secret stored later resolves on the next call', async () => {
    const { backend, data } = memoryBackend();
    const resolver = createSecretResolver({ backend });
    await expect(resolver.resolve('$VAULT_a')).rejects.toBeInstanceOf(SecretMissing);
    data.set('a', { password: 'now-here' });
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('now-here');
  });

  it('with a TTL of 0 reads the store every time', async () => {
    const { backend, state } = memoryBackend({ a: { password: 'v' } });
    const resolver = createSecretResolver({ backend, ttlMs: 0 });
    await resolver.resolve('$VAULT_a');
    await resolver.resolve('$VAULT_a');
    expect(state.reads).toBe(2);
  });

  it('forgets a reference on demand', async () => {
    const { backend, data } = memoryBackend({ a: { password: 'old' } });
    const resolver = createSecretResolver({ backend });
    await resolver.resolve('$VAULT_a');
    data.set('a', { password: 'rotated' });
    resolver.forget('$VAULT_a');
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('rotated');
  });

  it('keeps at most maxEntries references', async () => {
    const { backend, state } = memoryBackend({ a: { password: '1' }, b: { password: '2' }, c: { password: '3' } });
    const resolver = createSecretResolver({ backend, maxEntries: 2 });
    for (const r of ['$VAULT_a', '$VAULT_b', '$VAULT_c']) await resolver.resolve(r);
    await resolver.resolve('$VAULT_c');
    await resolver.resolve('$VAULT_b');
    expect(state.reads).toBe(3);
    await resolver.resolve('$VAULT_a');
    expect(state.reads).toBe(4);
  });

  it('keeps 500 references by default, and values for 60 s', async () => {
    const secrets = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`s${i}`, { password: `v${i}` }]));
    const { backend, state } = memoryBackend(secrets);
    const time = clock();
    const resolver = createSecretResolver({ backend, now: time.now });
    for (let i = 0; i < 500; i++) await resolver.resolve(`$VAULT_s${i}`);
    await resolver.resolve('$VAULT_s0');
    expect(state.reads).toBe(500);
    await resolver.resolve('$VAULT_s500');
    await resolver.resolve('$VAULT_s1');
    expect(state.reads).toBe(501);
    await resolver.resolve('$VAULT_s0');
    expect(state.reads).toBe(502);
    time.advance(59_999);
    await resolver.resolve('$VAULT_s2');
    expect(state.reads).toBe(502);
    time.advance(1);
    await resolver.resolve('$VAULT_s2');
    expect(state.reads).toBe(503);
  });

  it('puts a value read again after it expired at the back of the line for eviction', async () => {
    const { backend, state } = memoryBackend({ a: { password: '1' }, b: { password: '2' }, c: { password: '3' } });
    const time = clock();
    const resolver = createSecretResolver({ backend, maxEntries: 2, ttlMs: 1_000, now: time.now });
    await resolver.resolve('$VAULT_a');
    await resolver.resolve('$VAULT_b');
    time.advance(500);
    await resolver.resolve('$VAULT_b');
    time.advance(500);
    await resolver.resolve('$VAULT_a'); // expired: read again, now the newest
    expect(state.reads).toBe(3);
    await resolver.resolve('$VAULT_c'); // evicts the oldest, b
    await resolver.resolve('$VAULT_a');
    expect(state.reads).toBe(4);
    await resolver.resolve('$VAULT_b');
    expect(state.reads).toBe(5);
  });

  it('with a TTL of 0 reuses nothing, even when the clock steps back', async () => {
    const { backend, state } = memoryBackend({ a: { password: 'v' } });
    const time = clock();
    const resolver = createSecretResolver({ backend, ttlMs: 0, now: time.now });
    await resolver.resolve('$VAULT_a');
    time.advance(-1_000);
    await resolver.resolve('$VAULT_a');
    expect(state.reads).toBe(2);
  });

  it('forgets every reference when given none', async () => {
    const { backend, state } = memoryBackend({ a: { password: '1' }, b: { password: '2' } });
    const resolver = createSecretResolver({ backend });
    await resolver.resolve('$VAULT_a');
    await resolver.resolve('$VAULT_b');
    resolver.forget('$VAULT_a');
    await resolver.resolve('$VAULT_b');
    expect(state.reads).toBe(2);
    resolver.forget();
    await resolver.resolve('$VAULT_a');
    await resolver.resolve('$VAULT_b');
    expect(state.reads).toBe(4);
  });

  it('lets a failed read drop only its own entry, not a newer one for the same reference', async () => {
    // Each read waits for its own go-ahead, so the first can fail after the second succeeded.
    const pending: { go: () => void; fail: () => void }[] = [];
    let reads = 0;
    const backend: SecretsBackend = {
      kind: 'local',
      read: () => {
        reads += 1;
        return new Promise((resolve, reject) => pending.push({ go: () => resolve({ password: 'v' }), fail: () => reject(new SecretsUnavailable()) }));
      },
      write: async () => undefined,
      delete: async () => undefined,
      health: async () => undefined,
    };
    const resolver = createSecretResolver({ backend });
    const first = resolver.resolve('$VAULT_a');
    await Promise.resolve();
    resolver.forget('$VAULT_a');
    const second = resolver.resolve('$VAULT_a');
    await Promise.resolve();
    pending[1]!.go();
    await expect(second).resolves.toBe('v');
    pending[0]!.fail();
    await expect(first).rejects.toBeInstanceOf(SecretsUnavailable);
    await expect(resolver.resolve('$VAULT_a')).resolves.toBe('v');
    expect(reads).toBe(2);
  });
});

describe('createSecretResolver with a TTL of 0', () => {
  it('lets a read in flight be shared until it ends, and an older read ending not drop it', async () => {
    const pending: (() => void)[] = [];
    let reads = 0;
    const backend: SecretsBackend = {
      kind: 'local',
      read: () => {
        reads += 1;
        return new Promise((resolve) => pending.push(() => resolve({ password: 'v' })));
      },
      write: async () => undefined,
      delete: async () => undefined,
      health: async () => undefined,
    };
    const resolver = createSecretResolver({ backend, ttlMs: 0 });
    const first = resolver.resolve('$VAULT_a');
    await Promise.resolve();
    resolver.forget('$VAULT_a');
    const second = resolver.resolve('$VAULT_a');
    await Promise.resolve();
    pending[0]!();
    await first;
    const third = resolver.resolve('$VAULT_a'); // shares the second read, still in flight
    expect(reads).toBe(2);
    pending[1]!();
    await expect(Promise.all([second, third])).resolves.toEqual(['v', 'v']);
    const fourth = resolver.resolve('$VAULT_a'); // that read ended: nothing is kept
    expect(reads).toBe(3);
    pending[2]!();
    await fourth;
  });
});

describe('withAccess', () => {
  it('lets a read-only function read but never write or delete', async () => {
    const { backend, data } = memoryBackend({ a: { password: 'v' } });
    const readOnly = withAccess(backend, 'read');
    await expect(readOnly.read('a')).resolves.toEqual({ password: 'v' });
    await expect(readOnly.write('a', { password: 'x' })).rejects.toThrow(/read-only/);
    await expect(readOnly.delete('a')).rejects.toThrow(/read-only/);
    expect(data.get('a')).toEqual({ password: 'v' });
    expect(readOnly.kind).toBe('local');
    await expect(readOnly.health()).resolves.toBeUndefined();
  });

  it('hands a function with write access the backend itself', async () => {
    const { backend, data } = memoryBackend();
    const writable = withAccess(backend, 'write');
    expect(writable).toBe(backend);
    await writable.write('a', { password: 'x' });
    expect(data.get('a')).toEqual({ password: 'x' });
  });
});

describe('the secrets errors', () => {
  it('are problems with their status, type, title and detail', () => {
    const unavailable = new SecretsUnavailable();
    expect([unavailable.status, unavailable.slug, unavailable.title, unavailable.detail]).toEqual([
      503,
      'unavailable',
      'Service Unavailable',
      'The secrets store is unavailable; try again shortly.',
    ]);
    expect(unavailable.headers).toEqual({ 'Retry-After': '5' });
    expect(new SecretsUnavailable('Vault is sealed.').detail).toBe('Vault is sealed.');
    const missing = new SecretMissing('$VAULT_a#password');
    expect([missing.status, missing.slug, missing.title, missing.reference]).toEqual([500, 'secret-missing', 'Secret Missing', '$VAULT_a#password']);
    expect(missing.detail).toBe(
      'The secret that $VAULT_a#password refers to does not exist (never written, deleted or destroyed) in the secrets store; store it again or update the reference.',
    );
    const invalid = new SecretReferenceInvalid('why');
    expect([invalid.status, invalid.slug, invalid.title, invalid.detail]).toEqual([500, 'secret-reference-invalid', 'Secret Reference Invalid', 'why']);
  });
});
