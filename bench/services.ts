/**
 * The dependencies the measured calls are served by, all real and on loopback, started by the
 * benchmark: DynamoDB Local (AWS's emulator, in memory) with the template's tables and the
 * sample trees, the NSO simulator (`tools/simulators/nso-simulator.ts`) registered as adapter
 * `lab-nso`, a JWKS server that counts its fetches, a Vault-compatible server holding one
 * secret (for the Vault read references), and a data directory for the embedded
 * secrets store. Each function gets the environment the local gateway would give it
 * (`functionEnvironment`), pointed at these.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LOCAL_ACCOUNT, LOCAL_API_ID, LOCAL_AUDIENCE, LOCAL_CREDENTIALS, LOCAL_ISSUER, LOCAL_REGION } from '../tools/local/config.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../tools/local/dynamodb-local.js';
import { functionEnvironment } from '../tools/local/environment.js';
import { startNsoSimulator, type NsoSimulator } from '../tools/simulators/nso-simulator.js';
import { documentClientFor, localDynamoClient, SAMPLE_TREES_FILE, seedSampleTrees } from '../tools/local/seed.js';
import { readSynthInfo } from '../tools/local/synth.js';
import { ensureTables } from '../tools/local/tables.js';
import { localNames, type CloudAssembly, type ApiModel, type FunctionSpec } from '../tools/local/template.js';
import { claims, signJwt, startJwksServer, testKey, type JwksServer, type TestKey } from '../tools/simulators/jwks.js';
import { startVaultSimulator, type VaultSimulator } from '../tools/simulators/vault-simulator.js';

/** The adapter name the simulator is registered under (as `npm start` does). */
export const SIMULATOR_ADAPTER = 'lab-nso';

export interface Services {
  readonly dynamo: DynamoDbLocal;
  readonly client: DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  /** Physical table names by table key (`trees`, `adapters`, `idempotency`). */
  readonly tables: Readonly<Record<string, string>>;
  /** Ids of the sample trees loaded. */
  readonly treeIds: readonly string[];
  readonly simulator: NsoSimulator;
  /** A second simulator with the same data, for requests that bypass the relay (so each side's connections are counted apart). */
  readonly directSimulator: NsoSimulator;
  readonly simulatorCredentials: { readonly username: string; readonly password: string };
  readonly jwks: JwksServer;
  /** Holds `secret/bench` with a `password`; read with `vault.rootToken`. */
  readonly vault: VaultSimulator;
  readonly signingKey: TestKey;
  readonly dataDir: string;
  /** A token the stack's authorizer accepts (the template's issuer, audience and roles claim), signed with {@link signingKey}. */
  token(roles: readonly string[]): string;
  /** The environment of a function of the template, pointed at these services. */
  environmentOf(fn: FunctionSpec): Record<string, string>;
  stop(): Promise<void>;
}

/** Starts every dependency; `workDir` holds the data directory. */
export const startServices = async (o: { workDir: string; assembly: CloudAssembly; model: ApiModel }): Promise<Services> => {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  try {
    const dynamo = await startDynamoDbLocal();
    stops.push(() => dynamo.stop());
    const client = localDynamoClient(dynamo.endpoint);
    stops.push(async () => client.destroy());
    const documentClient = documentClientFor(client);
    const specs = Object.values(o.model.tables);
    await ensureTables(client, specs);
    const tables = Object.fromEntries(specs.filter((t) => t.key).map((t) => [t.key!, t.name]));
    if (!tables['trees']) throw new Error('the template declares no trees table');
    const seeded = await seedSampleTrees(documentClient, tables['trees']);
    const treeIds = seeded.written.map((w) => w.id);
    if (treeIds.length === 0) throw new Error(`no sample tree could be loaded from ${SAMPLE_TREES_FILE}`);

    const simulatorCredentials = { username: 'admin', password: 'bench-simulator-password' };
    const simulator = await startNsoSimulator({ credentials: simulatorCredentials });
    stops.push(() => simulator.close());
    const directSimulator = await startNsoSimulator({ credentials: simulatorCredentials });
    stops.push(() => directSimulator.close());

    const signingKey = testKey('rsa');
    const jwks = await startJwksServer({ keys: [signingKey.jwk] });
    stops.push(() => jwks.stop());
    const vault = await startVaultSimulator();
    stops.push(() => vault.close());
    vault.put('bench', { password: 'bench-vault-password' });

    const dataDir = path.join(o.workDir, 'data');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const synthInfo = readSynthInfo(o.assembly.outDir);
    const names = localNames(o.assembly.template, {
      stackName: o.model.stackName,
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT,
      apiId: LOCAL_API_ID,
      stageName: o.model.stageName,
    });
    const rewrites = [
      { from: synthInfo.localDir, to: dataDir },
      // The authorizer's JWKS URL names the local gateway; here the counting JWKS server serves it.
      { from: `http://127.0.0.1:${synthInfo.port}`, to: new URL(jwks.url).origin },
    ];
    const environmentOf = (fn: FunctionSpec): Record<string, string> =>
      functionEnvironment(fn, o.assembly.template, names, {
        region: LOCAL_REGION,
        dynamodbEndpoint: dynamo.endpoint,
        credentials: LOCAL_CREDENTIALS,
        rewrites,
        ...(process.env['PATH'] ? { path: process.env['PATH'] } : {}),
      }).environment;

    return {
      dynamo,
      client,
      documentClient,
      tables,
      treeIds,
      simulator,
      directSimulator,
      simulatorCredentials,
      jwks,
      vault,
      signingKey,
      dataDir,
      token: (roles) =>
        signJwt({ alg: 'RS256', typ: 'JWT', kid: signingKey.kid }, claims(LOCAL_ISSUER, LOCAL_AUDIENCE, { roles: [...roles], sub: 'bench' }), signingKey),
      environmentOf,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
