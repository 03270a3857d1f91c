/**
 * The warm measurements (3, 4, 5 of the issue), run by `warm-child.ts` in a process with the
 * function's environment; this side prepares what they need (events, canned DynamoDB answers
 * read from DynamoDB Local, the direct request) and counts what the servers saw (JWKS fetches,
 * orchestrator connections).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { pathToFileURL } from 'node:url';
import type { TreeSummary } from '../functions/trees/model.js';
import { runNode } from './child.js';
import type { Services } from './services.js';

/** Per-call times, in milliseconds. */
export interface TreesWarm {
  readonly canned: { readonly full: number[]; readonly bare: number[] };
  readonly dynamo: { readonly full: number[]; readonly bare: number[] };
}

export interface AuthorizerWarm {
  readonly full: number[];
  readonly raw: number[];
  /** JWKS downloads the warm process made (all calls, warm-up included). */
  readonly jwksFetches: number;
}

export interface RelayWarm {
  readonly canned: { readonly full: number[]; readonly direct: number[] };
  readonly dynamo: { readonly full: number[]; readonly direct: number[] };
  /** TCP connections the orchestrator behind the adapter accepted during the run. */
  readonly relayConnections: number;
  /** Calls the relay made in the run (warm-up included). */
  readonly relayCalls: number;
  readonly directConnections: number;
}

interface Common {
  readonly node: string;
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  readonly warmup: number;
  readonly calls: number;
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An item as DynamoDB's GetItem answers it on the wire (`{"Item":{…}}`), read from DynamoDB Local. */
const wireItem = async (services: Services, table: string, pk: string): Promise<string> => {
  const out = await services.client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }));
  if (!out.Item) throw new Error(`bench: no item ${pk} in ${table}`);
  return JSON.stringify({ Item: out.Item });
};

/** Measurement 3: tree summary, full handler against the bare GetCommand handler. */
export const measureTreesWarm = async (o: Common & { bundle: string; event: unknown; services: Services; treeId: TreeSummary['id'] }): Promise<TreesWarm> => {
  const cannedGetItem = await wireItem(o.services, o.services.tables['trees']!, `TREE#${o.treeId}`);
  const { result } = await runNode<TreesWarm>({
    node: o.node,
    args: [o.script, 'trees', encode({ bundle: pathToFileURL(o.bundle).href, event: o.event, cannedGetItem, warmup: o.warmup, calls: o.calls })],
    env: o.env,
    label: 'warm tree summary',
  });
  return result;
};

/** Measurement 4: authorizer handler against raw `crypto.verify` of the same token. */
export const measureAuthorizerWarm = async (o: Common & { bundle: string; event: unknown; token: string; services: Services }): Promise<AuthorizerWarm> => {
  const before = o.services.jwks.fetches();
  const { result } = await runNode<Omit<AuthorizerWarm, 'jwksFetches'>>({
    node: o.node,
    args: [
      o.script,
      'authorizer',
      encode({ bundle: pathToFileURL(o.bundle).href, event: o.event, token: o.token, jwk: o.services.signingKey.jwk, warmup: o.warmup, calls: o.calls }),
    ],
    env: o.env,
    label: 'warm authorizer',
  });
  return { ...result, jwksFetches: o.services.jwks.fetches() - before };
};

/**
 * Measurement 5: relay handler → simulator against a direct `fetch` → a second simulator with
 * the same data, so that each side's connections are counted by its own server.
 */
export const measureRelayWarm = async (
  o: Common & { bundle: string; event: unknown; services: Services; direct: { url: string; headers: Record<string, string> }; directConnections: () => number },
): Promise<RelayWarm> => {
  const sim = o.services.simulator;
  const cannedAdapter = await wireItem(o.services, o.services.tables['adapters']!, 'ADAPTER#lab-nso');
  const connectionsBefore = sim.connections;
  const directBefore = o.directConnections();
  sim.requests.length = 0;
  const { result } = await runNode<Omit<RelayWarm, 'relayConnections' | 'relayCalls' | 'directConnections'>>({
    node: o.node,
    args: [
      o.script,
      'relay',
      encode({ bundle: pathToFileURL(o.bundle).href, event: o.event, direct: o.direct, cannedAdapter, warmup: o.warmup, calls: o.calls }),
    ],
    env: o.env,
    label: 'warm relay',
  });
  const relayCalls = sim.requests.length;
  sim.requests.length = 0;
  return { ...result, relayConnections: sim.connections - connectionsBefore, relayCalls, directConnections: o.directConnections() - directBefore };
};
