/**
 * The compliance events' publisher ({@link ComplianceEvents}): EventBridge `PutEvents` on the
 * bus named by `EVENT_BUS_NAME` (the stack's own bus, or the one the deploy config names, by name
 * or ARN). Events go in order, in requests of at most 10 entries and 256 KB as EventBridge
 * counts them ({@link entrySize}). The entries a request did not put with a transient error
 * code are sent again, alone, with a doubling pause, a bounded number of times; then `publish`
 * rejects with {@link EventsNotPut}, naming how many failed. Delivery is at least once: a step
 * that runs again publishes again, and the `eventId` of a device event lets consumers drop
 * repeats.
 *
 * The endpoint comes from the SDK's own configuration (`AWS_ENDPOINT_URL_EVENTBRIDGE` locally,
 * the loopback simulator of tools/simulators/eventbridge-simulator.ts), as for DynamoDB and S3:
 * no code branches on local mode.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry, type PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE, type ComplianceEvent, type ComplianceEvents } from './history-model.js';

/** PutEvents' limits: entries per request, and bytes per request as {@link entrySize} counts them. */
export const PUT_EVENTS_LIMITS = { entries: 10, bytes: 256 * 1024 } as const;

/** The per-entry error codes worth sending again: the others (malformed detail, not authorized) fail the same way every time. */
const TRANSIENT = new Set(['InternalFailure', 'InternalException', 'ThrottlingException', 'ServiceUnavailable']);

/** Fail fast on a dead endpoint, as the other clients do: a second to connect, five to answer, the SDK's own three attempts. */
const CLIENT_LIMITS = { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 5_000 } as const;

const utf8 = (s: string | undefined): number => (s === undefined ? 0 : Buffer.byteLength(s, 'utf8'));

/**
 * An entry's size as EventBridge counts it against the 256 KB of a request: 14 bytes for `Time`
 * when given, and the UTF-8 bytes of `Source`, `DetailType`, `Detail` and each of `Resources`
 * (the bus name does not count).
 */
export const entrySize = (entry: PutEventsRequestEntry): number =>
  (entry.Time ? 14 : 0) + utf8(entry.Source) + utf8(entry.DetailType) + utf8(entry.Detail) + (entry.Resources ?? []).reduce((sum, r) => sum + utf8(r), 0);

/** The event's time: when the batch finished, or when the device's change was seen (so a redelivery carries the same). */
const eventTime = (event: ComplianceEvent): Date => new Date('at' in event.detail ? event.detail.at : event.detail.finished);

/** The PutEvents entry of one event on `bus`. */
export const toEntry = (event: ComplianceEvent, bus: string): PutEventsRequestEntry => ({
  Source: EVENT_SOURCE,
  DetailType: event.detailType,
  Detail: JSON.stringify(event.detail),
  EventBusName: bus,
  Time: eventTime(event),
});

/**
 * Splits entries, in order, into requests of at most {@link PUT_EVENTS_LIMITS}. An entry over
 * the byte limit on its own can never be put: it is returned apart, never sent.
 */
export const requestsOf = (
  entries: readonly PutEventsRequestEntry[],
  limits: { entries: number; bytes: number } = PUT_EVENTS_LIMITS,
): { requests: PutEventsRequestEntry[][]; oversize: PutEventsRequestEntry[] } => {
  const requests: PutEventsRequestEntry[][] = [];
  const oversize: PutEventsRequestEntry[] = [];
  let current: PutEventsRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entrySize(entry);
    if (size > limits.bytes) {
      oversize.push(entry);
      continue;
    }
    if (current.length === limits.entries || bytes + size > limits.bytes) {
      requests.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length) requests.push(current);
  return { requests, oversize };
};

/** Raised when some events could not be put after the retries: how many, of how many, and why. */
export class EventsNotPut extends Error {
  constructor(
    readonly failed: number,
    readonly total: number,
    readonly reasons: Readonly<Record<string, number>>,
  ) {
    const why = Object.entries(reasons)
      .map(([code, n]) => `${code} ×${n}`)
      .join(', ');
    super(`${failed} of ${total} compliance events could not be put on the event bus (${why})`);
    this.name = 'EventsNotPut';
  }
}

export interface PublisherOptions {
  /** The bus: its name or ARN. */
  readonly bus: string;
  readonly client: Pick<EventBridgeClient, 'send'>;
  /** Sends of a request's failed entries after the first (default 3). */
  readonly retries?: number;
  /** The first pause before a retry, doubled each time (default 200 ms, at most 2 s). */
  readonly retryDelayMs?: number;
  /** Waits (tests pass one that does not). */
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A {@link ComplianceEvents} that puts events with `client` on `bus`. */
export const eventBridgePublisher = (o: PublisherOptions): ComplianceEvents => {
  const retries = o.retries ?? 3;
  const firstDelay = o.retryDelayMs ?? 200;
  const sleep = o.sleep ?? defaultSleep;

  /**
   * Puts one request's entries, then its transiently failed ones again; returns the error codes
   * of those never put. A request the SDK could not send at all (after its own retries) fails
   * every entry still pending, and `stop` says the bus is unreachable or refuses this caller.
   */
  const put = async (entries: PutEventsRequestEntry[]): Promise<{ lost: string[]; stop: boolean }> => {
    const lost: string[] = [];
    let pending = entries;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt) await sleep(Math.min(firstDelay * 2 ** (attempt - 1), 2_000));
      let results: readonly PutEventsResultEntry[];
      try {
        const out = await o.client.send(new PutEventsCommand({ Entries: pending }));
        if (!out.FailedEntryCount) break;
        results = out.Entries ?? [];
      } catch (error) {
        return { lost: [...lost, ...pending.map(() => (error as Error).name || 'Error')], stop: true };
      }
      const again: PutEventsRequestEntry[] = [];
      pending.forEach((entry, i) => {
        const result = results[i];
        if (result?.EventId && !result.ErrorCode) return;
        const code = result?.ErrorCode ?? 'InternalFailure';
        if (TRANSIENT.has(code) && attempt < retries) again.push(entry);
        else lost.push(code);
      });
      pending = again;
    }
    return { lost, stop: false };
  };

  return {
    publish: async (events) => {
      if (!events.length) return;
      const { requests, oversize } = requestsOf(events.map((e) => toEntry(e, o.bus)));
      const codes: string[] = oversize.map(() => 'EntryTooLarge');
      for (const [i, request] of requests.entries()) {
        const { lost, stop } = await put(request);
        codes.push(...lost);
        if (stop) {
          // The rest would fail alike: counted, not sent.
          codes.push(...requests.slice(i + 1).flatMap((entries) => entries.map(() => 'NotSent')));
          break;
        }
      }
      if (codes.length) {
        const reasons: Record<string, number> = {};
        for (const code of codes) reasons[code] = (reasons[code] ?? 0) + 1;
        throw new EventsNotPut(codes.length, events.length, reasons);
      }
    },
  };
};

/**
 * The container's publisher on the bus of `EVENT_BUS_NAME`, or undefined when the function has
 * no bus (a stack built before events existed): the batches then publish nothing.
 */
export const complianceEvents = (env: NodeJS.ProcessEnv = process.env): ComplianceEvents | undefined => {
  const bus = env['EVENT_BUS_NAME'];
  if (!bus) return undefined;
  const client = new EventBridgeClient({
    maxAttempts: CLIENT_LIMITS.maxAttempts,
    requestHandler: { connectionTimeout: CLIENT_LIMITS.connectionTimeoutMs, requestTimeout: CLIENT_LIMITS.requestTimeoutMs, throwOnRequestTimeout: true },
  });
  return eventBridgePublisher({ bus, client });
};
