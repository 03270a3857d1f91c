/**
 * The adapters store's last guard, against DynamoDB Local: only a `$VAULT_` reference ever
 * reaches the table as a password, and an item that holds anything else is read as damaged.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { adapterKey, createAdapterStore, type AdapterFields } from '../../functions/adapters/store.js';
import { documentClient } from '../../functions/shared/dynamo.js';
import { InternalError } from '../../functions/shared/problem.js';
import { SecretReferenceInvalid } from '../../functions/secrets/errors.js';
import { createTables } from '../support/tables.js';

let table: string;
const NOW = '2026-03-04T05:06:07.089Z';

const fields = (name: string, password: string): AdapterFields => ({
  name,
  type: 'nso',
  baseUrl: 'https://nso.example.net',
  auth: { type: 'basic', username: 'admin', password },
});
const itemOf = async (name: string) =>
  (await documentClient.send(new GetCommand({ TableName: table, Key: adapterKey(name), ConsistentRead: true }))).Item;

beforeAll(async () => {
  table = (await createTables()).adapters;
});

describe('the adapters store', () => {
  it.each([
    ['a plain password', 'Sup3r-secret'],
    ['an empty password', ''],
    ['a reference after a space', ' $VAULT_netconfig/adapters/x#password'],
    ['a reference in another case', '$vault_netconfig/adapters/x#password'],
    ['an $ENC value', '$ENCabcdef'],
  ])('refuses to store %s, writes nothing and never names the value', async (_label, password) => {
    const store = createAdapterStore(documentClient, table);
    const name = `guard-${Math.random().toString(36).slice(2, 10)}`;
    const error = await store.put(fields(name, password), NOW).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).logDetail).toMatch(/not a \$VAULT_ reference/);
    expect((error as InternalError).logFields).toEqual({ adapter: name });
    if (password !== '') expect(JSON.stringify({ ...(error as InternalError), message: (error as Error).message })).not.toContain(password);
    expect(await itemOf(name)).toBeUndefined();
  });

  it('refuses to replace a stored reference with a plain password, and leaves the stored item as it was', async () => {
    const store = createAdapterStore(documentClient, table);
    await store.put(fields('guard-kept', '$VAULT_netconfig/adapters/guard-kept#password'), NOW);
    const before = await itemOf('guard-kept');
    for (const expected of [undefined, await store.current('guard-kept')]) {
      await expect(store.put(fields('guard-kept', 'Sup3r-secret'), '2026-03-05T00:00:00.000Z', expected)).rejects.toBeInstanceOf(InternalError);
    }
    expect(await itemOf('guard-kept')).toEqual(before);
  });

  it('stores a $VAULT_ reference, and replaces it with another', async () => {
    const store = createAdapterStore(documentClient, table);
    const first = await store.put(fields('guard-ok', '$VAULT_netconfig/adapters/guard-ok#password'), NOW);
    expect(first.created).toBe(true);
    expect((await itemOf('guard-ok'))?.['auth']).toEqual({ type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/guard-ok#password' });
    const second = await store.put(fields('guard-ok', '$VAULT_team/nso#pw'), NOW);
    expect(second).toMatchObject({ created: false, previousPassword: '$VAULT_netconfig/adapters/guard-ok#password' });
  });

  it('reads an item whose password is not a reference as damaged, naming the adapter only', async () => {
    await documentClient.send(
      new PutCommand({
        TableName: table,
        Item: { ...adapterKey('guard-damaged'), kind: 'adapter', ...fields('guard-damaged', 'plain-Pa55'), created: NOW, lastUpdated: NOW },
      }),
    );
    const error = await createAdapterStore(documentClient, table)
      .get('guard-damaged')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // The documented problem for a password that is not a reference, naming the adapter only.
    expect(error).toBeInstanceOf(SecretReferenceInvalid);
    const body = (error as SecretReferenceInvalid).toBody();
    expect(body.detail).toContain('guard-damaged');
    expect(JSON.stringify(body)).not.toContain('plain-Pa55');
  });
});
