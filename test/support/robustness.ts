/**
 * What the robustness tests share: private tables in DynamoDB Local, an NSO simulator on
 * loopback registered as adapter `lab` (its password in the local secrets store), and the
 * environment the relay needs. Handlers are imported by the test after {@link startRelayWorld}.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAdapterStore, type AdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import type { TableKey } from '../../functions/platform/route.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { createTables } from '../../tools/local/table-copies.js';

export const NSO_PASSWORD = 'robust-Pa55-word';
export const CONFIG_PATH = '/restconf/data/tailf-ncs:devices/device=ce0/config';
export const RELAY_RESOURCE = '/orch_manager/restAction/{adapterId}';
export const TREES_RESOURCE = '/configuration_manager/configs';

export interface RelayWorld {
  readonly tables: Record<TableKey, string>;
  readonly nso: NsoSimulator;
  readonly secretsFile: string;
  readonly adapters: AdapterStore;
  /** Registers an adapter whose password is the simulator's (by reference). */
  addAdapter(name: string, baseUrl: string, extra?: { timeoutMs?: number }): Promise<void>;
  /** Every item of a table, read consistently. */
  items(table: TableKey): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/**
 * Creates the tables (setting `*_TABLE`), the simulator, the secrets file and adapter `lab`,
 * and sets `SECRETS_BACKEND=local`, `SECRETS_FILE` and `LOCAL_MODE=true` for the handlers.
 */
export const startRelayWorld = async (): Promise<RelayWorld> => {
  const tables = await createTables();
  const dir = await mkdtemp(path.join(tmpdir(), 'robust-'));
  const nso = await startNsoSimulator({ credentials: { username: 'admin', password: NSO_PASSWORD } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/lab', { password: NSO_PASSWORD });
  const adapters = createAdapterStore(documentClient, tables.adapters);
  const addAdapter = async (name: string, baseUrl: string, extra: { timeoutMs?: number } = {}) => {
    // A fresh record: the store refuses to move a kept secret to another origin.
    await adapters.delete(name);
    await adapters.put(
      { name, type: 'nso', baseUrl, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/lab#password' }, ...extra },
      new Date().toISOString(),
    );
  };
  await addAdapter('lab', nso.url);
  process.env['SECRETS_BACKEND'] = 'local';
  process.env['SECRETS_FILE'] = secretsFile;
  process.env['LOCAL_MODE'] = 'true';
  return {
    tables,
    nso,
    secretsFile,
    adapters,
    addAdapter,
    items: async (table) => {
      const items: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      for (let page = 0; page < 1000; page++) {
        const out = await documentClient.send(
          new ScanCommand({ TableName: tables[table], ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }),
        );
        items.push(...(out.Items ?? []));
        start = out.LastEvaluatedKey;
        if (!start) break;
      }
      return items;
    },
    close: async () => {
      await nso.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** A header of a proxy result, whatever its case. */
export const headerOf = (result: Pick<APIGatewayProxyResult, 'headers'>, name: string): string | undefined => {
  const found = Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase());
  return found === undefined ? undefined : String(found[1]);
};

/** Waits until `condition` holds, polling every 10 ms, at most `limitMs` (then throws). */
export const until = async (condition: () => boolean, limitMs = 10_000): Promise<void> => {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
