/** The registry's rules with fakes behind its own interfaces (store and secrets backend). */
import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import { changeAdapterState, deleteAdapter, encodeCursor, listAdapters, putAdapter, setAdapterLogLevel } from '../../functions/adapters/service.js';
import { AdapterWriteRefused, type AdapterFields, type AdapterStore, type StoredState } from '../../functions/adapters/store.js';
import type { SecretData, SecretsBackend } from '../../functions/secrets/backend.js';
import { SecretsUnavailable } from '../../functions/secrets/errors.js';
import { BadRequest, NotFound } from '../../functions/shared/problem.js';

/**
 * The store with DynamoDB's write semantics: a revision per record, and the conditional
 * update (same record as read; a kept reference only with the same origin and user name).
 * `failPut` stands for DynamoDB failing between the secret write and the record switch.
 */
const fakeStore = () => {
  const items = new Map<string, Adapter & { revision: number }>();
  const state = { failPut: false };
  const store: AdapterStore = {
    get: async (name) => items.get(name),
    current: async (name) => {
      const item = items.get(name);
      return item ? { revision: item.revision, baseUrl: item.baseUrl, username: item.auth.username, password: item.auth.password } : null;
    },
    put: async (fields: AdapterFields, now: string, expected?: StoredState | null) => {
      if (state.failPut) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
      const old = items.get(fields.name);
      if (expected !== undefined && (expected === null ? old !== undefined : old?.revision !== expected.revision)) throw new AdapterWriteRefused('changed');
      if (old && old.auth.password === fields.auth.password && (old.baseUrl !== fields.baseUrl || old.auth.username !== fields.auth.username)) {
        throw new AdapterWriteRefused('secret-moved');
      }
      const adapter: Adapter = { ...fields, created: old?.created ?? now, lastUpdated: now };
      items.set(fields.name, { ...adapter, revision: (old?.revision ?? 0) + 1 });
      return { created: !old, adapter, ...(old ? { previousPassword: old.auth.password } : {}) };
    },
    list: async ({ limit, after }) => {
      const all = [...items.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).filter((a) => after === undefined || a.name > after);
      return { items: all.slice(0, limit), more: all.length > limit };
    },
    delete: async (name) => {
      const old = items.get(name);
      items.delete(name);
      return old ? { password: old.auth.password } : undefined;
    },
    setState: async (name, next, now) => {
      const old = items.get(name);
      if (!old) return undefined;
      const updated = { ...old, state: next, lastUpdated: now, revision: old.revision + 1 };
      items.set(name, updated);
      const { revision: _, ...adapter } = updated;
      return adapter;
    },
    setLogLevel: async (name, logLevel, now) => {
      const old = items.get(name);
      if (!old) return undefined;
      const updated = { ...old, logLevel, lastUpdated: now, revision: old.revision + 1 };
      items.set(name, updated);
      const { revision: _, ...adapter } = updated;
      return adapter;
    },
  };
  return { store, items, state };
};

const fakeSecrets = () => {
  const data = new Map<string, SecretData>();
  const calls: string[] = [];
  const state = { failDelete: false, failWrite: false };
  const secrets: SecretsBackend = {
    kind: 'vault',
    read: async (path) => (calls.push(`read ${path}`), data.get(path)),
    write: async (path, value) => {
      calls.push(`write ${path}`);
      if (state.failWrite) throw new SecretsUnavailable();
      data.set(path, value);
    },
    delete: async (path) => {
      calls.push(`delete ${path}`);
      if (state.failDelete) throw new SecretsUnavailable();
      data.delete(path);
    },
    health: async () => undefined,
  };
  return { secrets, data, calls, state };
};

const input = (password: string, baseUrl = 'https://nso.example.net') => ({ type: 'nso' as const, baseUrl, auth: { type: 'basic' as const, username: 'u', password } });

describe('putAdapter', () => {
  it('writes the plain value to a new version before the adapter, and keeps only the reference', async () => {
    const { store, items } = fakeStore();
    const { secrets, data, calls } = fakeSecrets();
    const order: string[] = [];
    const tracked: AdapterStore = { ...store, put: (f, n, e) => (order.push(`put ${calls.length}`), store.put(f, n, e)) };
    const result = await putAdapter({ store: tracked, secrets, localMode: false, newVersion: () => 'v1' }, 'lab', input('pw'));
    expect(calls).toEqual(['write netconfig/adapters/lab/v1']);
    expect(order).toEqual(['put 1']);
    expect(data.get('netconfig/adapters/lab/v1')).toEqual({ password: 'pw' });
    expect(items.get('lab')?.auth.password).toBe('$VAULT_netconfig/adapters/lab/v1#password');
    expect(result.created).toBe(true);
  });

  it('writes nothing anywhere when the base URL is refused', async () => {
    const { store, items } = fakeStore();
    const { secrets, calls } = fakeSecrets();
    await expect(putAdapter({ store, secrets, localMode: false }, 'lab', input('pw', 'http://127.0.0.1'))).rejects.toBeInstanceOf(BadRequest);
    expect(calls).toEqual([]);
    expect(items.size).toBe(0);
  });

  it('stores no adapter when the secret cannot be written', async () => {
    const { store, items } = fakeStore();
    const { secrets, state } = fakeSecrets();
    state.failWrite = true;
    await expect(putAdapter({ store, secrets, localMode: false }, 'lab', input('pw'))).rejects.toBeInstanceOf(SecretsUnavailable);
    expect(items.size).toBe(0);
  });

  it('still stores the adapter when deleting the replaced generated secret fails', async () => {
    const { store, items } = fakeStore();
    const { secrets, data, state } = fakeSecrets();
    await putAdapter({ store, secrets, localMode: false }, 'lab', input('pw'));
    data.set('team/lab', { password: 'team' });
    state.failDelete = true;
    const result = await putAdapter({ store, secrets, localMode: false, referencePrefixes: ['team'] }, 'lab', input('$VAULT_team/lab'));
    expect(result.created).toBe(false);
    expect(items.get('lab')?.auth.password).toBe('$VAULT_team/lab#password');
  });

  it('uses the injected clock for created and lastUpdated', async () => {
    const { store } = fakeStore();
    const { secrets } = fakeSecrets();
    const now = () => new Date('2021-06-01T10:00:00.123Z');
    const { adapter } = await putAdapter({ store, secrets, localMode: false, now }, 'lab', input('pw'));
    expect(adapter.created).toBe('2021-06-01T10:00:00.123Z');
    expect(adapter.lastUpdated).toBe('2021-06-01T10:00:00.123Z');
  });
});

/** Versions 1, 2, 3… so that paths are predictable. */
const versions = () => {
  let n = 0;
  return () => `v${++n}`;
};

describe('putAdapter: a stored secret never follows an adapter to another origin or user', () => {
  const setUp = async () => {
    const { store, items, state } = fakeStore();
    const fake = fakeSecrets();
    const deps = { store, secrets: fake.secrets, localMode: false, newVersion: versions() };
    await putAdapter(deps, 'lab', input('pw', 'https://nso.example.net:8443'));
    const own = items.get('lab')!.auth.password;
    fake.calls.length = 0;
    return { deps, items, storeState: state, own, ...fake };
  };
  const body = (password: string, baseUrl: string, username = 'u') => ({ type: 'nso' as const, baseUrl, auth: { type: 'basic' as const, username, password } });

  it('keeps the reference it holds when origin and user stay (another timeout, the origin written differently)', async () => {
    const { deps, items, own, calls } = await setUp();
    for (const baseUrl of ['https://nso.example.net:8443', 'HTTPS://NSO.example.net:8443/']) {
      const result = await putAdapter(deps, 'lab', { ...body(own, baseUrl), timeoutMs: 2000 });
      expect(result.created).toBe(false);
    }
    expect(items.get('lab')!.auth.password).toBe(own);
    expect(calls.filter((c) => !c.startsWith('read '))).toEqual([]);
  });

  it.each([
    ['another host', 'https://evil.example.net:8443', 'u'],
    ['another port', 'https://nso.example.net:9443', 'u'],
    ['another scheme', 'http://nso.example.net:8443', 'u'],
    ['the default port', 'https://nso.example.net', 'u'],
    ['another user name', 'https://nso.example.net:8443', 'other'],
    ['another user name differing in case', 'https://nso.example.net:8443', 'U'],
  ])('refuses to keep its reference with %s (400 asking for the password again), and changes nothing', async (_label, baseUrl, username) => {
    const { deps, items, own, calls, data } = await setUp();
    const before = { ...items.get('lab')! };
    const error = await putAdapter(deps, 'lab', body(own, baseUrl, username)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ field: 'auth.password', message: expect.stringMatching(/given again/) })]);
    expect(items.get('lab')).toEqual(before);
    expect(calls.filter((c) => !c.startsWith('read '))).toEqual([]);
    expect([...data.keys()]).toEqual(['netconfig/adapters/lab/v1']);
  });

  it('takes the plain password with a new origin: a new version, the old one deleted', async () => {
    const { deps, items, data } = await setUp();
    await putAdapter(deps, 'lab', body('pw2', 'https://evil.example.net'));
    expect(items.get('lab')!.auth.password).toBe('$VAULT_netconfig/adapters/lab/v2#password');
    expect([...data.keys()]).toEqual(['netconfig/adapters/lab/v2']);
  });

  it.each([
    ['a managed secret of another adapter (first path)', '$VAULT_netconfig/adapters/lab#password'],
    ['a managed secret of another adapter (a version)', '$VAULT_netconfig/adapters/lab/v1#password'],
    ['a managed path of no adapter', '$VAULT_netconfig/adapters#password'],
    ['a path no prefix allows', '$VAULT_team/nso#password'],
    ['a path that only starts like an allowed prefix', '$VAULT_shared-nso/x#password'],
  ])('refuses a new adapter naming %s, on any origin, and writes nothing', async (_label, reference) => {
    const { deps, items, calls, data } = await setUp();
    data.set('team/nso', { password: 'team' });
    data.set('shared-nso/x', { password: 'x' });
    const error = await putAdapter({ ...deps, referencePrefixes: ['shared'] }, 'thief', body(reference, 'https://evil.example.net')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequest);
    expect(items.has('thief')).toBe(false);
    expect(calls.filter((c) => c.startsWith('write ') || c.startsWith('delete '))).toEqual([]);
  });

  it("refuses the adapter's own managed path when it does not hold it (a left-over secret)", async () => {
    const { deps, items, data } = await setUp();
    data.set('netconfig/adapters/ghost/v9', { password: 'left over' });
    await expect(putAdapter(deps, 'ghost', body('$VAULT_netconfig/adapters/ghost/v9#password', 'https://evil.example.net'))).rejects.toBeInstanceOf(BadRequest);
    expect(items.has('ghost')).toBe(false);
  });

  it('accepts a path under a listed prefix, on any origin (the operator lets admins use it)', async () => {
    const { deps, items, data } = await setUp();
    data.set('shared/nso', { password: 'shared' });
    await putAdapter({ ...deps, referencePrefixes: ['shared'] }, 'lab', body('$VAULT_shared/nso', 'https://other.example.net'));
    expect(items.get('lab')!.auth.password).toBe('$VAULT_shared/nso#password');
    // The version the adapter no longer uses is deleted.
    expect(data.has('netconfig/adapters/lab/v1')).toBe(false);
  });

  it('is enforced by the store too: a write that keeps the reference and moves the origin is refused there', async () => {
    const { deps, items, own } = await setUp();
    await expect(deps.store.put({ ...items.get('lab')!, baseUrl: 'https://evil.example.net' }, new Date().toISOString())).rejects.toBeInstanceOf(AdapterWriteRefused);
    expect(items.get('lab')!.auth.password).toBe(own);
  });
});

describe('putAdapter: all or nothing', () => {
  it('leaves the live password and record as they were, and no new secret, when the record switch fails', async () => {
    const { store, items, state } = fakeStore();
    const { secrets, data } = fakeSecrets();
    const deps = { store, secrets, localMode: false, newVersion: versions() };
    await putAdapter(deps, 'lab', input('old-pw'));
    const before = { ...items.get('lab')! };
    state.failPut = true;
    await expect(putAdapter(deps, 'lab', input('new-pw'))).rejects.toThrow(/ECONNREFUSED/);
    expect(items.get('lab')).toEqual(before);
    expect([...data.entries()]).toEqual([['netconfig/adapters/lab/v1', { password: 'old-pw' }]]);
  });

  it('leaves no orphan secret when a create fails', async () => {
    const { store, items, state } = fakeStore();
    const { secrets, data } = fakeSecrets();
    state.failPut = true;
    await expect(putAdapter({ store, secrets, localMode: false }, 'lab', input('pw'))).rejects.toThrow(/ECONNREFUSED/);
    expect(items.size).toBe(0);
    expect(data.size).toBe(0);
  });

  it('answers 409 and deletes its new version when another write changed the adapter meanwhile', async () => {
    const { store, items } = fakeStore();
    const { secrets, data } = fakeSecrets();
    const deps = { store, secrets, localMode: false, newVersion: versions() };
    await putAdapter(deps, 'lab', input('one'));
    // Another request lands between this one's read and its write.
    const racing: AdapterStore = {
      ...store,
      current: async (name) => {
        const seen = await store.current(name);
        await putAdapter({ ...deps, store }, 'lab', input('two'));
        return seen;
      },
    };
    const error = await putAdapter({ ...deps, store: racing }, 'lab', input('three')).catch((e: unknown) => e);
    expect((error as { status?: number }).status).toBe(409);
    expect(items.get('lab')!.auth.password).toBe('$VAULT_netconfig/adapters/lab/v2#password');
    expect([...data.keys()]).toEqual(['netconfig/adapters/lab/v2']);
  });
});

describe('deleteAdapter', () => {
  it('answers 404 for an unknown adapter and touches no secret', async () => {
    const { store } = fakeStore();
    const { secrets, calls } = fakeSecrets();
    await expect(deleteAdapter({ store, secrets }, 'none')).rejects.toBeInstanceOf(NotFound);
    expect(calls).toEqual([]);
  });

  it('deletes the adapter even when its generated secret cannot be deleted', async () => {
    const { store, items } = fakeStore();
    const { secrets, state } = fakeSecrets();
    await putAdapter({ store, secrets, localMode: false }, 'lab', input('pw'));
    state.failDelete = true;
    await expect(deleteAdapter({ store, secrets }, 'lab')).resolves.toBeUndefined();
    expect(items.has('lab')).toBe(false);
  });
});

describe('listAdapters', () => {
  it('pages with a cursor and answers no next on the last page', async () => {
    const { store } = fakeStore();
    const { secrets } = fakeSecrets();
    for (const name of ['c', 'a', 'b']) await putAdapter({ store, secrets, localMode: false }, name, input('pw'));
    const first = await listAdapters(store, { limit: '2' });
    expect(first.items.map((a) => a.name)).toEqual(['a', 'b']);
    expect(first.next).toBe(encodeCursor('b'));
    const second = await listAdapters(store, { limit: '2', cursor: first.next! });
    expect(second.items.map((a) => a.name)).toEqual(['c']);
    expect(second.next).toBeUndefined();
  });

  it.each(['x', Buffer.from('{"after":5}').toString('base64url'), Buffer.from('[]').toString('base64url'), encodeCursor('')])(
    'answers 400 naming cursor for %j',
    async (cursor) => {
      const { store } = fakeStore();
      const error = await listAdapters(store, { cursor }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequest);
      expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'query', field: 'cursor' })]);
    },
  );
});

describe('log level and state writes that keep losing the race', () => {
  it('answer 409 adapter-changed, and a level equal to the current one writes nothing', async () => {
    const { store, items } = fakeStore();
    await putAdapter({ store, secrets: fakeSecrets().secrets, localMode: true }, 'busy', input('pw'));
    const writes: string[] = [];
    const racing: AdapterStore = {
      ...store,
      setLogLevel: async () => {
        writes.push('logLevel');
        throw new AdapterWriteRefused('changed');
      },
      setState: async () => {
        writes.push('state');
        throw new AdapterWriteRefused('changed');
      },
      delete: async () => {
        writes.push('delete');
        throw new AdapterWriteRefused('changed');
      },
    };
    await expect(setAdapterLogLevel({ store: racing }, 'busy', 'trace', 'ops')).rejects.toMatchObject({ status: 409, slug: 'adapter-changed' });
    await expect(changeAdapterState({ store: racing }, 'busy', 'stop', 'ops')).rejects.toMatchObject({ status: 409, slug: 'adapter-changed' });
    await expect(deleteAdapter({ store: racing, secrets: fakeSecrets().secrets }, 'busy', 'ops')).rejects.toMatchObject({ status: 409, slug: 'adapter-changed' });
    expect(writes).toEqual(['logLevel', 'state', 'delete']);
    items.set('busy', { ...items.get('busy')!, logLevel: 'trace' });
    await expect(setAdapterLogLevel({ store: racing }, 'busy', 'trace', 'ops')).resolves.toMatchObject({ logLevel: 'trace' });
    expect(writes).toHaveLength(3);
  });
});
