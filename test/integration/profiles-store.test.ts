/**
 * The profile store's refusals when another write lands between its read and its write: a real
 * DynamoDB Local, with the other write made by a second store just before the first one sends.
 */
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { profileSettings } from '../../functions/runtime/profile-model.js';
import { ProfileWriteRefused, createProfileStore, type ProfileStore } from '../../functions/runtime/profile-store.js';
import { listChangelog } from '../../functions/runtime/changelog.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { createTables } from '../../tools/local/table-copies.js';

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
    await expect(
      store.setApplicationSettings(
        'configuration_manager',
        { complianceConcurrency: 3, reportRetentionDays: 9, configRetentionDays: 30, historyRetentionDays: 400 },
        change,
      ),
    ).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.get('default'))!.applications.configuration_manager.complianceConcurrency).toBe(10);
    expect((await other.get('blue'))!.applications.configuration_manager.complianceConcurrency).toBe(10);
    await other.activate('default', change);
  });

  it("refuses a log level when the application's settings changed meanwhile", async () => {
    const store = storeWithWriteBefore(() =>
      other.setApplicationSettings('orch_manager', { orchestratorTimeoutMs: 2_000, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 }, change),
    );
    await expect(store.setApplicationLogLevel('orch_manager', 'debug', change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.get('default'))!.applications.orch_manager).toEqual({
      orchestratorTimeoutMs: 2_000,
      adapterCacheSeconds: 5,
      maxConcurrentCallsPerAdapter: 0,
    });
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

describe("the applications' audit trail, whichever route changes what they run with", () => {
  const trail = async (name: 'orch_manager' | 'configuration_manager') =>
    (await listChangelog(documentClient, { kind: 'application', name }, {}, tables.changelog)).items;
  // The profile's own level as the deployment's LOG_LEVEL made it: configuration_manager inherits it.
  const settings = (orchestratorTimeoutMs: number) =>
    profileSettings({ applications: { orch_manager: { logLevel: 'trace', orchestratorTimeoutMs, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 } } });

  it('records a replacement of the active profile as a change of each application whose settings it changes, in the same write', async () => {
    await other.activate('default', change);
    const orchBefore = (await trail('orch_manager')).length;
    const configBefore = (await trail('configuration_manager')).length;
    await other.replace('default', settings(4_000), { now: '2026-01-02T00:00:00.000Z', by: 'mallory' });
    const [entry] = await trail('orch_manager');
    expect((await trail('orch_manager')).length).toBe(orchBefore + 1);
    expect(entry).toMatchObject({ by: 'mallory', action: 'replaced', at: '2026-01-02T00:00:00.000Z' });
    expect(entry!.changes).toEqual(
      expect.arrayContaining([
        { field: 'logLevel', to: 'trace' },
        { field: 'orchestratorTimeoutMs', from: expect.any(Number), to: 4_000 },
      ]),
    );
    // configuration_manager's settings did not change: no entry.
    expect((await trail('configuration_manager')).length).toBe(configBefore);
    // A new profile log level is a change of every application that inherits it.
    await other.replace('default', { ...settings(4_000), logLevel: 'error' }, change);
    expect((await trail('configuration_manager'))[0]!.changes).toEqual([{ field: 'profileLogLevel', from: (await other.get('blue'))!.logLevel, to: 'error' }]);
  });

  it('records nothing for a profile that is not active, and refuses it if it became active meanwhile', async () => {
    const orchBefore = (await trail('orch_manager')).length;
    await other.replace('blue', settings(3_000), change);
    expect((await trail('orch_manager')).length).toBe(orchBefore);
    const store = storeWithWriteBefore(() => other.activate('blue', change));
    await expect(store.replace('blue', settings(2_000), change)).rejects.toEqual(new ProfileWriteRefused('contended'));
    expect((await other.get('blue'))!.applications.orch_manager.orchestratorTimeoutMs).toBe(3_000);
    await other.activate('default', change);
  });

  it('records an activation as a change of every application, naming both profiles', async () => {
    await other.activate('default', change);
    const before = (await trail('configuration_manager')).length;
    await other.activate('blue', { now: '2026-01-03T00:00:00.000Z', by: 'mallory' });
    const entries = await trail('configuration_manager');
    expect(entries.length).toBe(before + 1);
    expect(entries[0]).toMatchObject({ by: 'mallory', action: 'replaced' });
    expect(entries[0]!.changes).toContainEqual({ field: 'profile', from: 'default', to: 'blue' });
    expect((await trail('orch_manager'))[0]!.changes).toContainEqual({ field: 'profile', from: 'default', to: 'blue' });
    await other.activate('default', change);
  });
});
