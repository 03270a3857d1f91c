/** The registry's rules with fakes behind its own interfaces (store and secrets backend). */
import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import { deleteAdapter, encodeCursor, listAdapters, putAdapter } from '../../functions/adapters/service.js';
import type { AdapterFields, AdapterStore } from '../../functions/adapters/store.js';
import type { SecretData, SecretsBackend } from '../../functions/secrets/backend.js';
import { SecretsUnavailable } from '../../functions/secrets/errors.js';
import { BadRequest, NotFound } from '../../functions/shared/problem.js';

const fakeStore = () => {
  const items = new Map<string, Adapter>();
  const store: AdapterStore = {
    get: async (name) => items.get(name),
    put: async (fields: AdapterFields, now: string) => {
      const old = items.get(fields.name);
      const adapter: Adapter = { ...fields, created: old?.created ?? now, lastUpdated: now };
      items.set(fields.name, adapter);
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
  };
  return { store, items };
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
  it('writes the plain value to the store before the adapter, and keeps only the reference', async () => {
    const { store, items } = fakeStore();
    const { secrets, data, calls } = fakeSecrets();
    const order: string[] = [];
    const tracked: AdapterStore = { ...store, put: (f, n) => (order.push(`put ${calls.length}`), store.put(f, n)) };
    const result = await putAdapter({ store: tracked, secrets, localMode: false }, 'lab', input('pw'));
    expect(calls).toEqual(['write netconfig/adapters/lab']);
    expect(order).toEqual(['put 1']);
    expect(data.get('netconfig/adapters/lab')).toEqual({ password: 'pw' });
    expect(items.get('lab')?.auth.password).toBe('$VAULT_netconfig/adapters/lab#password');
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
    const result = await putAdapter({ store, secrets, localMode: false }, 'lab', input('$VAULT_team/lab'));
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
