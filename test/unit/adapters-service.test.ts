/** The registry's rules with fakes behind its own interfaces (store and secrets backend). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import { changeAdapterState, deleteAdapter, encodeCursor, listAdapters, putAdapter, setAdapterLogLevel } from '../../functions/adapters/service.js';
import { AdapterWriteRefused, type AdapterFields, type AdapterStore, type StoredState } from '../../functions/adapters/store.js';
import type { SecretData, SecretsBackend } from '../../functions/outbound/secrets/backend.js';
import { SecretsUnavailable } from '../../functions/outbound/secrets/errors.js';
import { parseReference } from '../../functions/outbound/secrets/reference.js';
import { BadRequest, HttpProblem, NotFound } from '../../functions/platform/problem.js';
import { logger } from '../../functions/platform/logger.js';
import { captureStdout } from '../support/stdout.js';

/**
 * The store with DynamoDB's write semantics: a revision per record, and the conditional
 * update (same record as read; a kept reference only with the same origin and user name).
 * `failPut` stands for DynamoDB failing between the secret write and the record switch.
 */
const fakeStore = () => {
  const items = new Map<string, Adapter & { revision: number }>();
  const pending = new Set<string>();
  const state = { failPut: false };
  const store: AdapterStore = {
    caseTwin: async (name) => [...items.keys()].find((n) => n !== name && n.toLowerCase() === name.toLowerCase()),
    pendingSecrets: async () => [...pending],
    markPending: async (entries, change) => {
      for (const entry of entries) change === 'add' ? pending.add(entry) : pending.delete(entry);
    },
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
  return { store, items, state, pending };
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

const input = (password: string, baseUrl = 'https://nso.example.net') => ({
  type: 'nso' as const,
  baseUrl,
  auth: { type: 'basic' as const, username: 'u', password },
});

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
    expect((error as BadRequest).toBody()['errors']).toEqual([
      expect.objectContaining({ field: 'auth.password', message: expect.stringMatching(/given again/) }),
    ]);
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
    await expect(deps.store.put({ ...items.get('lab')!, baseUrl: 'https://evil.example.net' }, new Date().toISOString())).rejects.toBeInstanceOf(
      AdapterWriteRefused,
    );
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
    await expect(deleteAdapter({ store: racing, secrets: fakeSecrets().secrets }, 'busy', 'ops')).rejects.toMatchObject({
      status: 409,
      slug: 'adapter-changed',
    });
    expect(writes).toEqual(['logLevel', 'state', 'delete']);
    items.set('busy', { ...items.get('busy')!, logLevel: 'trace' });
    await expect(setAdapterLogLevel({ store: racing }, 'busy', 'trace', 'ops')).resolves.toMatchObject({ logLevel: 'trace' });
    expect(writes).toHaveLength(3);
  });
});

/** What the service logs at info and above (the suite runs at warn). */
const captureInfo = () => {
  logger.setLevel('info');
  const log = captureStdout();
  return { ...log, restore: () => (log.restore(), logger.setLevel('warn')) };
};

/** The problem a call fails with, as the client reads it. */
const problemOf = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpProblem);
  return (error as HttpProblem).toBody() as { status: number; type: string; detail: string; errors?: { in: string; field: string; message: string }[] };
};

describe('putAdapter: what each refusal says', () => {
  const setUp = async (referencePrefixes?: string[]) => {
    const { store, items } = fakeStore();
    const fake = fakeSecrets();
    const deps = { store, secrets: fake.secrets, localMode: false, newVersion: versions(), ...(referencePrefixes ? { referencePrefixes } : {}) };
    await putAdapter(deps, 'lab', input('pw'));
    fake.calls.length = 0;
    return { deps, items, ...fake };
  };

  it("refuses the adapter's own reference with a new origin before reading the secret", async () => {
    const { deps, calls } = await setUp();
    const body = await problemOf(putAdapter(deps, 'lab', input('$VAULT_netconfig/adapters/lab/v1#password', 'https://other.example.net')));
    expect(body.errors).toEqual([
      {
        in: 'body',
        field: 'auth.password',
        message:
          'must be given again (the plain value) when baseUrl or auth.username changes: a stored secret never follows an adapter to another orchestrator or user',
      },
    ]);
    expect(body.detail).toBe(`The request is invalid: auth.password ${body.errors![0]!.message}.`);
    expect(calls).toEqual([]);
    const user = await problemOf(
      putAdapter(deps, 'lab', {
        ...input('$VAULT_netconfig/adapters/lab/v1#password'),
        auth: { type: 'basic', username: 'root', password: '$VAULT_netconfig/adapters/lab/v1#password' },
      }),
    );
    expect(user.errors![0]!.message).toMatch(/^must be given again/);
    expect(calls).toEqual([]);
  });

  it.each<[string, string, string[] | undefined, string]>([
    [
      'its own managed path it does not hold',
      '$VAULT_netconfig/adapters/lab/v7#password',
      undefined,
      'refers to a secret the service manages that this adapter does not hold; give the plain value',
    ],
    [
      "another adapter's managed path",
      '$VAULT_netconfig/adapters/other/v1#password',
      ['netconfig'],
      'refers to a path the service manages for another adapter; give the plain value',
    ],
    [
      'a path no prefix allows',
      '$VAULT_team/nso#password',
      ['shared', 'ops'],
      'refers to a secret outside the paths this deployment lets adapters name (shared, ops); give the plain value',
    ],
    [
      'a path, with no prefixes configured',
      '$VAULT_team/nso#password',
      undefined,
      'refers to a secret this deployment does not let adapters name (no SECRETS_REFERENCE_PREFIXES); give the plain value',
    ],
  ])('refuses %s, reading nothing', async (_label, reference, prefixes, message) => {
    const { deps, calls, data } = await setUp(prefixes);
    data.set('netconfig/adapters/lab/v7', { password: 'x' });
    data.set('netconfig/adapters/other/v1', { password: 'x' });
    data.set('team/nso', { password: 'x' });
    const body = await problemOf(putAdapter(deps, 'lab', input(reference)));
    expect(body.errors).toEqual([{ in: 'body', field: 'auth.password', message }]);
    expect(calls).toEqual([]);
  });

  it('refuses a malformed reference, saying why and the form', async () => {
    const { deps } = await setUp(['team']);
    const body = await problemOf(putAdapter(deps, 'lab', input('$VAULT_team/nso#')));
    expect(body.errors).toEqual([
      { in: 'body', field: 'auth.password', message: expect.stringMatching(/^is not a valid \$VAULT_ reference: .+ \(form: "\$VAULT_<path>#<key>"\)$/) },
    ]);
  });

  it.each([
    ['does not exist', undefined],
    ['lacks the key', { user: 'x' }],
  ])('refuses a reference to a secret that %s, naming it in canonical form', async (_label, secret) => {
    const { deps, items, data } = await setUp(['team']);
    if (secret) data.set('team/nso', secret);
    const before = { ...items.get('lab')! };
    const body = await problemOf(putAdapter(deps, 'lab', input('$VAULT_team/nso')));
    expect(body.errors).toEqual([
      { in: 'body', field: 'auth.password', message: 'refers to a secret that does not exist or is empty ($VAULT_team/nso#password)' },
    ]);
    expect(items.get('lab')).toEqual(before);
  });

  it('passes on a secrets store that cannot be read, and stores nothing', async () => {
    const { deps, items } = await setUp(['team']);
    const before = { ...items.get('lab')! };
    const secrets = { ...deps.secrets, read: async () => Promise.reject(new SecretsUnavailable()) };
    await expect(putAdapter({ ...deps, secrets }, 'lab', input('$VAULT_team/nso'))).rejects.toBeInstanceOf(SecretsUnavailable);
    expect(items.get('lab')).toEqual(before);
  });

  it('refuses every value that looks like a reference but is not one, and stores nothing', async () => {
    // Any case of "$vault", with or without the underscore, after optional whitespace.
    const caseOf = fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }).map((upper) => [...'vault'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
    const variant = fc
      .tuple(fc.constantFrom('', ' ', '\t', '  '), caseOf, fc.constantFrom('_', '-', ':', '', ' _'), fc.stringMatching(/^[a-z0-9/#]{0,12}$/))
      .filter(([space, word, sep]) => space !== '' || word !== 'VAULT' || sep !== '_');
    // Forms a reader could take for it: invisible characters before or inside, fullwidth
    // letters and sign, the sign percent-encoded (also as UTF-8 of the fullwidth sign).
    const invisible = fc.constantFrom('', '\u200b', '\u2060', '\ufeff', '\u200e', '\u034f', '\u00ad', '\u180e');
    const dollar = fc.constantFrom('$', '\uff04', '\ufe69', '%24', '\uff0524', '%EF%BC%84');
    const fullwidth = (text: string, wide: boolean) => (wide ? [...text].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('') : text);
    await fc.assert(
      fc.asyncProperty(variant, invisible, invisible, dollar, fc.boolean(), async ([space, word, sep, rest], before1, inside, sign, wide) => {
        const { deps, items, calls } = await setUp(['team']);
        const before = { ...items.get('lab')! };
        const value = `${before1}${space}${sign}${inside}${fullwidth(word, wide)}${sep}${rest}`;
        const body = await problemOf(putAdapter(deps, 'lab', input(value)));
        expect(body.errors).toEqual([
          {
            in: 'body',
            field: 'auth.password',
            message: expect.stringMatching(/^is not a valid \$VAULT_ reference: a reference starts with \$VAULT_ exactly .+ \(form: "\$VAULT_<path>#<key>"\)$/),
          },
        ]);
        expect(calls.filter((c) => c.startsWith('write'))).toEqual([]);
        expect(items.get('lab')).toEqual(before);
      }),
    );
  });

  it('refuses a malformed $VAULT_ reference the same way, whatever follows the prefix', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string().filter((s) => typeof parseReference(`$VAULT_${s}`) === 'string'),
        async (rest) => {
          const { deps, items, calls } = await setUp(['team']);
          const before = { ...items.get('lab')! };
          const body = await problemOf(putAdapter(deps, 'lab', input(`$VAULT_${rest}`)));
          expect(body.status).toBe(400);
          expect(calls.filter((c) => c.startsWith('write'))).toEqual([]);
          expect(items.get('lab')).toEqual(before);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('refuses a $VAULT_ reference as the user name', async () => {
    const { deps } = await setUp();
    const body = await problemOf(putAdapter(deps, 'lab', { ...input('pw'), auth: { type: 'basic', username: '$VAULT_team/u#user', password: 'pw' } }));
    expect(body.errors).toEqual([{ in: 'body', field: 'auth.username', message: 'cannot be a $VAULT_ reference (only auth.password is a secret field)' }]);
  });

  it('refuses to create over an existing adapter (409 adapter-exists), writing no secret', async () => {
    const { deps, calls } = await setUp();
    const body = await problemOf(putAdapter(deps, 'lab', input('pw2'), 'create'));
    expect(body).toMatchObject({
      status: 409,
      type: 'urn:netconfig:problem:adapter-exists',
      detail: 'An adapter is already named "lab"; replace it with PUT /adapters/{name}.',
    });
    expect(calls).toEqual([]);
  });

  it.each<[string, 'upsert' | 'create', 'changed' | 'secret-moved', number, string]>([
    ['a replace that lost a race', 'upsert', 'changed', 409, 'adapter-changed'],
    ['a create that lost a race', 'create', 'changed', 409, 'adapter-exists'],
    ['a replace the store found moving a secret', 'upsert', 'secret-moved', 400, 'validation'],
    ['a create the store found moving a secret', 'create', 'secret-moved', 400, 'validation'],
  ])('answers the store refusing %s as %i %s, and deletes its new version', async (_label, mode, reason, status, type) => {
    const { store } = fakeStore();
    const { secrets, data } = fakeSecrets();
    const refusing: AdapterStore = { ...store, put: async () => Promise.reject(new AdapterWriteRefused(reason)) };
    const body = await problemOf(putAdapter({ store: refusing, secrets, localMode: false }, 'lab', input('pw'), mode));
    expect(body).toMatchObject({ status, type: `urn:netconfig:problem:${type}` });
    if (type === 'adapter-changed') expect(body.detail).toBe('The adapter was changed by another request while this one ran; read it again and retry.');
    if (type === 'validation') expect(body.errors).toEqual([{ in: 'body', field: 'auth.password', message: expect.stringMatching(/^must be given again/) }]);
    expect(data.size).toBe(0);
  });
});

describe('putAdapter: what it stores and logs', () => {
  it('passes the optional settings to the store when given, and leaves them out when not', async () => {
    const { store } = fakeStore();
    const { secrets } = fakeSecrets();
    const seen: AdapterFields[] = [];
    const recording: AdapterStore = { ...store, put: (fields, ...rest) => (seen.push(fields), store.put(fields, ...rest)) };
    const deps = { store: recording, secrets, localMode: false, newVersion: versions() };
    await putAdapter(deps, 'lab', { ...input('pw'), timeoutMs: 4000, complianceConcurrency: 3 });
    await putAdapter(deps, 'lab', input('pw'));
    expect(seen[0]).toMatchObject({ timeoutMs: 4000, complianceConcurrency: 3 });
    expect(Object.keys(seen[1]!).sort()).toEqual(['auth', 'baseUrl', 'name', 'type']);
  });

  it('labels a new version by time and randomness when none is given', async () => {
    const { store, items } = fakeStore();
    const { secrets } = fakeSecrets();
    await putAdapter({ store, secrets, localMode: false }, 'lab', input('pw'));
    await putAdapter({ store, secrets, localMode: false }, 'lab', input('pw2'));
    expect(items.get('lab')!.auth.password).toMatch(/^\$VAULT_netconfig\/adapters\/lab\/v[0-9a-z]{8,}-[0-9a-f]{12}#password$/);
  });

  it('logs what it stored, where the secret came from, and a secret it could not delete, never a value', async () => {
    const { store } = fakeStore();
    const { secrets, state, data } = fakeSecrets();
    const deps = { store, secrets, localMode: false, newVersion: versions(), referencePrefixes: ['team'] };
    data.set('team/nso', { password: 'team-value' });
    const log = captureInfo();
    try {
      await putAdapter(deps, 'lab', input('plain-value'));
      state.failDelete = true;
      await putAdapter(deps, 'lab', input('$VAULT_team/nso'));
    } finally {
      log.restore();
    }
    expect(log.entries().map((e) => [e['level'], e['message'], e['adapter'], e['created'], e['source'], e['path']])).toEqual([
      ['info', 'adapter stored', 'lab', true, 'stored by the service', undefined],
      ['warn', 'a secret no record names could not be deleted yet; the next adapter write retries', 'lab', undefined, undefined, 'netconfig/adapters/lab/v1'],
      ['info', 'adapter stored', 'lab', false, 'reference', undefined],
    ]);
    expect(log.raw()).not.toMatch(/plain-value|team-value/);
  });
});

describe('changeAdapterState and setAdapterLogLevel', () => {
  const setUp = async () => {
    const { store, items } = fakeStore();
    await putAdapter({ store, secrets: fakeSecrets().secrets, localMode: false }, 'lab', input('pw'));
    const writes: unknown[][] = [];
    const recording: AdapterStore = {
      ...store,
      setState: (...args) => (writes.push(['state', ...args]), store.setState(...args)),
      setLogLevel: (...args) => (writes.push(['logLevel', ...args]), store.setLogLevel(...args)),
    };
    const now = () => new Date('2026-04-01T00:00:00.000Z');
    return { deps: { store: recording, now }, items, writes };
  };
  const AT = '2026-04-01T00:00:00.000Z';

  it('stop, start and restart write the state with their own changelog action; a no-op writes nothing', async () => {
    const { deps, writes } = await setUp();
    expect((await changeAdapterState(deps, 'lab', 'start', 'ops')).state).toBeUndefined();
    expect(writes).toEqual([]);
    expect(await changeAdapterState(deps, 'lab', 'restart', 'ops')).toMatchObject({ state: 'RUNNING', lastUpdated: AT });
    expect(await changeAdapterState(deps, 'lab', 'stop', 'ops')).toMatchObject({ state: 'STOPPED' });
    await changeAdapterState(deps, 'lab', 'stop', 'ops');
    expect(await changeAdapterState(deps, 'lab', 'start')).toMatchObject({ state: 'RUNNING' });
    expect(writes).toEqual([
      ['state', 'lab', 'RUNNING', AT, 'ops', 'restarted'],
      ['state', 'lab', 'STOPPED', AT, 'ops', 'stopped'],
      ['state', 'lab', 'RUNNING', AT, 'system', 'started'],
    ]);
  });

  it('refuses to restart a stopped adapter (409 adapter-stopped), writing nothing', async () => {
    const { deps, writes } = await setUp();
    await changeAdapterState(deps, 'lab', 'stop');
    writes.length = 0;
    const body = await problemOf(changeAdapterState(deps, 'lab', 'restart'));
    expect(body).toMatchObject({
      status: 409,
      type: 'urn:netconfig:problem:adapter-stopped',
      detail: "Adapter 'lab' is stopped: start it (PUT /adapters/lab/start) rather than restart it.",
    });
    expect(writes).toEqual([]);
  });

  it('sets a new log level, and writes nothing for the level it has (info when never set)', async () => {
    const { deps, writes } = await setUp();
    expect((await setAdapterLogLevel(deps, 'lab', 'info')).logLevel).toBeUndefined();
    expect(await setAdapterLogLevel(deps, 'lab', 'debug', 'ops')).toMatchObject({ logLevel: 'debug', lastUpdated: AT });
    expect(writes).toEqual([['logLevel', 'lab', 'debug', AT, 'ops']]);
  });

  it('answer 404 for no such adapter, and when it is deleted between the read and the write', async () => {
    const { deps, items } = await setUp();
    for (const call of [
      changeAdapterState(deps, 'none', 'stop'),
      setAdapterLogLevel(deps, 'none', 'debug'),
      deleteAdapter({ store: deps.store, secrets: fakeSecrets().secrets }, 'none'),
    ]) {
      expect(await problemOf(call)).toMatchObject({ status: 404, detail: 'No adapter is named "none".' });
    }
    const vanishing: AdapterStore = {
      ...deps.store,
      setState: async () => (items.delete('lab'), undefined),
      setLogLevel: async () => (items.delete('lab'), undefined),
    };
    expect(await problemOf(changeAdapterState({ ...deps, store: vanishing }, 'lab', 'stop'))).toMatchObject({
      status: 404,
      detail: 'No adapter is named "lab".',
    });
    await putAdapter({ store: deps.store, secrets: fakeSecrets().secrets, localMode: false }, 'lab', input('pw'));
    expect(await problemOf(setAdapterLogLevel({ ...deps, store: vanishing }, 'lab', 'trace'))).toMatchObject({
      status: 404,
      detail: 'No adapter is named "lab".',
    });
  });

  it('log each change, and a deletion', async () => {
    const { deps } = await setUp();
    const log = captureInfo();
    try {
      await changeAdapterState(deps, 'lab', 'stop');
      await setAdapterLogLevel(deps, 'lab', 'warn');
      await deleteAdapter({ store: deps.store, secrets: fakeSecrets().secrets }, 'lab');
    } finally {
      log.restore();
    }
    expect(log.entries().map(({ level, message, adapter, action, state, logLevel }) => ({ level, message, adapter, action, state, logLevel }))).toEqual([
      { level: 'info', message: 'adapter state changed', adapter: 'lab', action: 'stop', state: 'STOPPED', logLevel: undefined },
      { level: 'info', message: 'adapter log level changed', adapter: 'lab', action: undefined, state: undefined, logLevel: 'warn' },
      { level: 'info', message: 'adapter deleted', adapter: 'lab', action: undefined, state: undefined, logLevel: undefined },
    ]);
  });
});

describe('listAdapters: the page size and the cursor', () => {
  it('asks the store for the default page without a limit, and continues after the last name of a full page', async () => {
    const { store } = fakeStore();
    const { secrets } = fakeSecrets();
    for (const name of ['d', 'c', 'a', 'b']) await putAdapter({ store, secrets, localMode: false }, name, input('pw'));
    const asked: unknown[] = [];
    const recording: AdapterStore = { ...store, list: (options) => (asked.push(options), store.list(options)) };
    expect((await listAdapters(recording, {})).items.map((a) => a.name)).toEqual(['a', 'b', 'c', 'd']);
    const page = await listAdapters(recording, { limit: '3' });
    expect(page.next).toBe(encodeCursor('c'));
    await listAdapters(recording, { limit: '3', cursor: page.next! });
    expect(asked).toEqual([{ limit: 50 }, { limit: 3 }, { limit: 3, after: 'c' }]);
  });
});
