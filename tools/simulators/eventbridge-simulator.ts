/**
 * A loopback stand-in for Amazon EventBridge's `PutEvents` (AWS JSON 1.1,
 * `X-Amz-Target: AWSEvents.PutEvents`), for local mode and the tests. Point the SDK at it with
 * `AWS_ENDPOINT_URL_EVENTBRIDGE`; the code under test is not told.
 *
 * It checks a request as EventBridge does (1 to 10 entries, 256 KB by EventBridge's count, each
 * entry's source, detail type, JSON object detail and known bus) and answers per entry an
 * `EventId` or an `ErrorCode`, with `FailedEntryCount`. Every event put is kept as EventBridge
 * delivers it to a rule's target (`version`, `id`, `detail-type`, `source`, `time`, `detail`…):
 * in memory (`GET /events` answers them as JSON), appended to a JSON Lines file when one is given
 * (local mode: `events.jsonl` in the data directory), and passed to `onEvent`.
 *
 * Tests can make chosen entries fail with {@link EventBridgeSimulator.failEntries}; nothing else
 * fails an entry that EventBridge would accept.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** An event as EventBridge delivers it to a target, with the bus it was put on. */
export interface DeliveredEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Record<string, unknown>;
  readonly eventBusName: string;
}

/** A request entry as it came over the wire (`Time` in epoch seconds, as the SDK sends it). */
export interface WireEntry {
  readonly Source?: unknown;
  readonly DetailType?: unknown;
  readonly Detail?: unknown;
  readonly EventBusName?: unknown;
  readonly Time?: unknown;
  readonly Resources?: unknown;
}

export interface EventBridgeSimulatorOptions {
  /** The buses that exist besides `default`, by name. */
  readonly buses?: readonly string[];
  /** Appends each event put, one JSON object a line. */
  readonly file?: string;
  /** Called with each event put, in order. */
  readonly onEvent?: (event: DeliveredEvent) => void;
  readonly region?: string;
  readonly account?: string;
  readonly port?: number;
}

export interface EventBridgeSimulator {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every event put so far, in order. */
  readonly events: readonly DeliveredEvent[];
  /** PutEvents requests answered (valid or not). */
  readonly requests: number;
  /**
   * Test hook: an entry that `match`es fails with `code` (default `InternalFailure`) on its first
   * `times` puts (default: every put), counted per entry content. Replaces the previous rule.
   */
  failEntries(match: (entry: WireEntry) => boolean, o?: { times?: number; code?: string }): void;
  close(): Promise<void>;
}

const LIMITS = { entries: 10, bytes: 256 * 1024 } as const;

const utf8 = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);

/**
 * An entry's size as EventBridge counts it: the rule of functions/compliance/events.ts `entrySize`, written
 * again on purpose, from the wire form, so the simulator stands for AWS rather than agree with the client's code.
 */
const wireSize = (e: WireEntry): number =>
  (e.Time !== undefined ? 14 : 0) +
  utf8(e.Source) +
  utf8(e.DetailType) +
  utf8(e.Detail) +
  (Array.isArray(e.Resources) ? e.Resources.reduce<number>((n, r) => n + utf8(r), 0) : 0);

const busName = (value: unknown): string => {
  if (typeof value !== 'string' || value === '') return 'default';
  const arn = /^arn:[^:]+:events:[^:]*:\d*:event-bus\/(.+)$/.exec(value);
  return arn ? arn[1]! : value;
};

/** Why EventBridge would refuse one entry, or nothing. */
const entryError = (e: WireEntry, buses: ReadonlySet<string>): { code: string; message: string } | undefined => {
  for (const key of ['Source', 'DetailType', 'Detail'] as const) {
    if (typeof e[key] !== 'string' || e[key] === '')
      return { code: 'InvalidArgument', message: `Parameter ${key} is not valid. Reason: ${key} is a required argument.` };
  }
  if ((e.Source as string).startsWith('aws.')) return { code: 'NotAuthorizedForSourceException', message: 'Not authorized for the source.' };
  let detail: unknown;
  try {
    detail = JSON.parse(e.Detail as string);
  } catch {
    detail = undefined;
  }
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return { code: 'MalformedDetail', message: 'Detail is malformed.' };
  if (!buses.has(busName(e.EventBusName))) return { code: 'ResourceNotFoundException', message: `Event bus ${busName(e.EventBusName)} does not exist.` };
  return undefined;
};

const isoSeconds = (d: Date): string => `${d.toISOString().slice(0, 19)}Z`;

/** Starts the simulator on a free loopback port (or `port`). */
export const startEventBridgeSimulator = async (o: EventBridgeSimulatorOptions = {}): Promise<EventBridgeSimulator> => {
  const buses = new Set(['default', ...(o.buses ?? [])]);
  const region = o.region ?? 'us-east-1';
  const account = o.account ?? '000000000000';
  const events: DeliveredEvent[] = [];
  let requests = 0;
  let failRule: { match: (e: WireEntry) => boolean; times: number; code: string } | undefined;
  const failedPuts = new Map<string, number>();
  if (o.file) mkdirSync(path.dirname(o.file), { recursive: true, mode: 0o700 });

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/x-amz-json-1.1', 'x-amzn-RequestId': randomUUID() };
    const type = (body as { __type?: string }).__type;
    if (type) headers['x-amzn-ErrorType'] = type;
    res.writeHead(status, headers).end(JSON.stringify(body));
  };
  const invalid = (res: ServerResponse, message: string) => send(res, 400, { __type: 'ValidationException', message });

  /** A test rule's failure for this entry, if it still applies. */
  const injected = (e: WireEntry): string | undefined => {
    if (!failRule?.match(e)) return undefined;
    const key = JSON.stringify([e.Source, e.DetailType, e.Detail, e.EventBusName]);
    const seen = failedPuts.get(key) ?? 0;
    if (seen >= failRule.times) return undefined;
    failedPuts.set(key, seen + 1);
    return failRule.code;
  };

  const deliver = (e: WireEntry): DeliveredEvent => {
    const time = typeof e.Time === 'number' ? new Date(e.Time * 1000) : new Date();
    const event: DeliveredEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': e.DetailType as string,
      source: e.Source as string,
      account,
      time: isoSeconds(time),
      region,
      resources: Array.isArray(e.Resources) ? (e.Resources as string[]) : [],
      detail: JSON.parse(e.Detail as string) as Record<string, unknown>,
      eventBusName: busName(e.EventBusName),
    };
    events.push(event);
    if (o.file) appendFileSync(o.file, `${JSON.stringify(event)}\n`, { mode: 0o600 });
    o.onEvent?.(event);
    return event;
  };

  const putEvents = (res: ServerResponse, body: unknown) => {
    const entries = (body as { Entries?: unknown } | null)?.Entries;
    if (!Array.isArray(entries))
      return invalid(res, "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null");
    if (entries.length < 1 || entries.length > LIMITS.entries)
      return invalid(
        res,
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length ${entries.length < 1 ? 'greater than or equal to 1' : 'less than or equal to 10'}`,
      );
    if ((entries as WireEntry[]).reduce((n, e) => n + wireSize(e), 0) > LIMITS.bytes)
      return invalid(res, 'Total size of the entries in the request is over the limit.');
    const results = (entries as WireEntry[]).map((e) => {
      const error = entryError(e, buses);
      if (error) return { ErrorCode: error.code, ErrorMessage: error.message };
      const code = injected(e);
      if (code) return { ErrorCode: code, ErrorMessage: 'Simulated failure.' };
      return { EventId: deliver(e).id };
    });
    send(res, 200, { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/events') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(events));
        return;
      }
      if (req.method !== 'POST') return send(res, 405, { __type: 'UnknownOperationException', message: 'POST a JSON 1.1 request' });
      requests += 1;
      const target = req.headers['x-amz-target'];
      if (target !== 'AWSEvents.PutEvents') return send(res, 400, { __type: 'UnknownOperationException', message: `unsupported operation ${String(target)}` });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(res, 400, { __type: 'SerializationException', message: 'Start of structure or map found where not expected.' });
      }
      putEvents(res, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    get requests() {
      return requests;
    },
    failEntries: (match, f = {}) => {
      failRule = { match, times: f.times ?? Number.POSITIVE_INFINITY, code: f.code ?? 'InternalFailure' };
      failedPuts.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/**
 * The line `npm start` prints for a compliance event: its detail type, then the batch (and plan)
 * with its status and totals, or the device with its grade's change.
 */
export const describeEvent = (event: Pick<DeliveredEvent, 'detail-type' | 'detail'>): string => {
  const d = event.detail;
  const str = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : undefined);
  if (typeof d['device'] === 'string') {
    return `${event['detail-type']}: ${str('device')} ${str('from') ?? '(new)'} → ${str('to')} (batch ${str('batchId')}${str('planId') ? `, plan ${str('planId')}` : ''})`;
  }
  const delta = d['delta'] as Record<string, number> | undefined;
  const changes = delta
    ? `, delta ${Object.entries(delta)
        .map(([k, n]) => `${k} ${n}`)
        .join(' ')}`
    : '';
  return `${event['detail-type']}: batch ${str('batchId')}${str('planId') ? ` (plan ${str('planId')})` : ''} ${str('status') ?? ''}, ${String(d['total'] ?? '?')} devices${changes}${str('reason') ? `: ${str('reason')}` : ''}`;
};
