import { describe, expect, it } from 'vitest';
import { withAccess, type SecretData, type SecretsBackend } from '../../functions/secrets/backend.js';
import { SecretMissing, SecretReferenceInvalid, SecretsUnavailable } from '../../functions/secrets/errors.js';
import { createSecretResolver, readReference } from '../../functions/secrets/resolve.js';

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
    expect(state.reads).toBe(3);
    await resolver.resolve('$VAULT_a');
    expect(state.reads).toBe(4);
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
  });
});
