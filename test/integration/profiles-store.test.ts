/**
 * The profile store's refusals when another write lands between its read and its write: a real
 * DynamoDB Local, with the other write made by a second store just before the first one sends.
 */
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { profileSettings } from '../../functions/profiles/model.js';
import { ProfileWriteRefused, createProfileStore, type ProfileStore } from '../../functions/profiles/store.js';
import { documentClient } from '../../functions/shared/dynamo.js';
import { createTables } from '../support/tables.js';

let tables: Awaited<ReturnType<typeof createTables>>;
let other: ProfileStore;
const change = { now: '2026-01-01T00:00:00.000Z', by: 'tester' };

/** A store whose next transaction is preceded by `meanwhile` (another writer's change). */
const storeWithWriteBefore = (meanwhile: () => Promise<unknown>): ProfileStore => {
  let armed = true;
  const client = {
    send: async (command: unknown, options?: unknown) => {
      if (armed && command instanceof TransactWriteCommand) {
        armed = false;
        await meanwhile();
      }
      return (documentClient.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
    },
  } as unknown as DynamoDBDocumentClient;
  return createProfileStore(client, tables.profiles, () => tables.changelog);
};

beforeAll(async () => {
  tables = await createTables();
  other = createProfileStore(documentClient, tables.profiles, () => tables.changelog);
  await other.create('blue', profileSettings({}), change);
});

describe('the profile store under concurrent writes', () => {
  it("refuses an application's settings when another profile became active meanwhile, writing nothing", async () => {
    const store = storeWithWriteBefore(() => other.activate('blue', change));
    await expect(store.setApplicationSettings('configuration_manager', { complianceConcurrency: 3, reportRetentionDays: 9 }, change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.get('default'))!.applications.configuration_manager.complianceConcurrency).toBe(10);
    expect((await other.get('blue'))!.applications.configuration_manager.complianceConcurrency).toBe(10);
    await other.activate('default', change);
  });

  it("refuses a log level when the application's settings changed meanwhile", async () => {
    const store = storeWithWriteBefore(() => other.setApplicationSettings('orch_manager', { orchestratorTimeoutMs: 2_000, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 }, change));
    await expect(store.setApplicationLogLevel('orch_manager', 'debug', change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.get('default'))!.applications.orch_manager).toEqual({ orchestratorTimeoutMs: 2_000, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 });
  });

  it('refuses a state change when the state changed meanwhile', async () => {
    const store = storeWithWriteBefore(() => other.setApplicationState('orch_manager', 'stop', change));
    await expect(store.setApplicationState('orch_manager', 'restart', change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.runtime()).applications.orch_manager.state).toBe('STOPPED');
    await other.setApplicationState('orch_manager', 'start', change);
  });

  it('refuses an activation when another landed meanwhile', async () => {
    const store = storeWithWriteBefore(() => other.activate('blue', change));
    await expect(store.activate('default', change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.runtime()).activeProfile).toBe('blue');
  });

  it('refuses to delete a profile that became active meanwhile', async () => {
    await other.create('green', profileSettings({}), change);
    const store = storeWithWriteBefore(() => other.activate('green', change));
    await expect(store.delete('green', change)).rejects.toEqual(new ProfileWriteRefused('active'));
    expect((await other.get('green'))!.active).toBe(true);
  });
});
