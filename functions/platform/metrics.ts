/**
 * Metrics in CloudWatch embedded metric format (EMF): a JSON line on stdout that the Lambda
 * log agent turns into CloudWatch metrics, with no API call and no dependency.
 *
 * Values are buffered during an invocation and written by {@link Metrics.flush}: one line per
 * distinct set of dimension values (EMF takes dimension values from the document's top-level
 * members, so two adapters cannot share a line). `httpHandler` flushes after every
 * invocation, success or failure; code outside it (the authorizer) uses the `record*`
 * helpers that flush at once.
 *
 * Namespace: `METRICS_NAMESPACE` (default `Netconfig`). Every metric carries the `Service`
 * dimension (`SERVICE_NAME`), so two deployments in one account stay apart.
 */
import { optionalEnv } from './env.js';

/** The CloudWatch units this service uses. */
export type MetricUnit = 'Count' | 'Milliseconds' | 'Percent' | 'None';

/** Dimension name → value. Keep values low-cardinality: each combination is its own metric. */
export type Dimensions = Readonly<Record<string, string>>;

/** EMF allows at most 100 values per metric and 100 metrics per document. */
const MAX_VALUES = 100;
const MAX_METRICS = 100;
/** CloudWatch dimension values: 1–1024 characters; we keep them far shorter. */
const MAX_DIMENSION_VALUE = 128;

interface Entry {
  unit: MetricUnit;
  values: number[];
}

interface Group {
  dimensions: Dimensions;
  /** Rollups: the dimension-name sets under which the metrics are published. */
  rollups: string[][];
  metrics: Map<string, Entry>;
}

/** A dimension value as CloudWatch accepts it: printable ASCII, bounded, never empty. */
export const dimensionValue = (value: string): string => {
  const clean = value
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, MAX_DIMENSION_VALUE)
    .trim();
  return clean === '' ? 'none' : clean;
};

export class Metrics {
  readonly #groups = new Map<string, Group>();
  #context: Readonly<Record<string, unknown>> = {};

  constructor(
    readonly namespace: string,
    readonly service: string,
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
    private readonly now: () => number = Date.now,
    /** False (`METRICS_DISABLED=true`): every value is dropped at once, nothing is buffered or written. */
    readonly enabled: boolean = true,
  ) {}

  /**
   * Adds one value. `rollups` lists extra dimension-name sets to publish the same value
   * under (e.g. `[['Service']]` for a total across adapters); the full set is always one.
   */
  add(name: string, unit: MetricUnit, value: number, dimensions: Dimensions = {}, rollups: readonly (readonly string[])[] = []): void {
    if (!this.enabled || !Number.isFinite(value)) return;
    const dims: Record<string, string> = { Service: this.service };
    for (const k in dimensions) dims[k] = dimensionValue(dimensions[k]!);
    // Any fixed order makes the key independent of the order the caller named the dimensions
    // in; code-unit order needs no collator (`localeCompare` was most of this method's time).
    const key = JSON.stringify(Object.entries(dims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let group = this.#groups.get(key);
    if (!group) {
      group = { dimensions: dims, rollups: [Object.keys(dims)], metrics: new Map() };
      this.#groups.set(key, group);
    }
    for (const rollup of rollups) {
      const names = ['Service', ...rollup.filter((n) => n !== 'Service' && n in dims)];
      if (!group.rollups.some((r) => r.length === names.length && r.every((n, i) => n === names[i]))) group.rollups.push(names);
    }
    let entry = group.metrics.get(name);
    if (!entry) {
      if (group.metrics.size >= MAX_METRICS) {
        this.#flushGroup(key, group);
        group = { ...group, metrics: new Map() };
        this.#groups.set(key, group);
      }
      entry = { unit, values: [] };
      group.metrics.set(name, entry);
    }
    entry.values.push(value);
    if (entry.values.length >= MAX_VALUES) this.#flushGroup(key, group);
  }

  /**
   * Sets the per-invocation members every line carries (the correlation id), as the logger
   * does: an EMF line is a log line too. They are not dimensions, so they cost no metrics.
   */
  setContext(context: Readonly<Record<string, unknown>>): void {
    this.#context = context;
  }

  /** Writes every buffered value, one EMF line per dimension set, and empties the buffer. */
  flush(): void {
    // Called after every invocation, most of which recorded nothing: no copy, no work then.
    if (this.#groups.size === 0) return;
    for (const [key, group] of [...this.#groups]) this.#flushGroup(key, group);
  }

  #flushGroup(key: string, group: Group): void {
    this.#groups.delete(key);
    if (group.metrics.size === 0) return;
    const document: Record<string, unknown> = {
      _aws: {
        Timestamp: this.now(),
        CloudWatchMetrics: [
          {
            Namespace: this.namespace,
            Dimensions: group.rollups,
            Metrics: [...group.metrics].map(([name, e]) => ({ Name: name, Unit: e.unit })),
          },
        ],
      },
      ...this.#context,
      ...group.dimensions,
    };
    for (const [name, e] of group.metrics) document[name] = e.values.length === 1 ? e.values[0] : e.values;
    this.write(`${JSON.stringify(document)}\n`);
  }
}

/** The namespace of the service's metrics unless `METRICS_NAMESPACE` says otherwise (the dashboard uses it). */
export const DEFAULT_METRICS_NAMESPACE = 'Netconfig';

/** `METRICS_DISABLED=true` drops every value (e.g. in test runs, like Powertools' `POWERTOOLS_METRICS_DISABLED`). */
const disabled = optionalEnv('METRICS_DISABLED', 'false') === 'true';

/** The container's metrics buffer. */
export const metrics = new Metrics(
  optionalEnv('METRICS_NAMESPACE', DEFAULT_METRICS_NAMESPACE),
  optionalEnv('SERVICE_NAME', 'netconfig'),
  disabled ? () => undefined : undefined,
  undefined,
  !disabled,
);

/** How one relay call ended: the orchestrator's status class, or no answer at all. */
export type RelayResultClass = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'error';

/** The result class of an orchestrator answer (`status`), a timeout, or any other failure. */
export const relayResultClass = (outcome: number | 'timeout' | 'error'): RelayResultClass => {
  if (outcome === 'timeout' || outcome === 'error') return outcome;
  if (outcome >= 200 && outcome < 300) return '2xx';
  if (outcome >= 300 && outcome < 400) return '3xx';
  if (outcome >= 400 && outcome < 500) return '4xx';
  if (outcome >= 500 && outcome < 600) return '5xx';
  return 'error';
};

export interface RelayCall {
  /** The adapter's name. */
  readonly adapter: string;
  /** The orchestrator's HTTP status, or `timeout` / `error` when it gave none. */
  readonly outcome: number | 'timeout' | 'error';
  /** Time from sending the request to the end of the answer (or the failure). */
  readonly latencyMs: number;
}

/**
 * Records one orchestrator call: `RelayCalls` (Count) by adapter and result class, and
 * `RelayLatency` (Milliseconds) by adapter, each also rolled up across adapters. Buffered;
 * `httpHandler` flushes it.
 */
export const recordRelayCall = (call: RelayCall, sink: Metrics = metrics): void => {
  const resultClass = relayResultClass(call.outcome);
  sink.add('RelayCalls', 'Count', 1, { Adapter: call.adapter, ResultClass: resultClass }, [['ResultClass'], []]);
  sink.add('RelayLatency', 'Milliseconds', Math.max(0, call.latencyMs), { Adapter: call.adapter }, [[]]);
};

/**
 * Records one request the authorizer refused (`AuthorizerDenials`, Count) by reason, with
 * a total across reasons. Flushed at once: the authorizer does not run under `httpHandler`.
 * `reason` must be one of a small fixed set (the authorizer's reject reasons).
 */
export const recordAuthorizerDenial = (reason: string, sink: Metrics = metrics): void => {
  const safe = /^[a-z][a-z0-9-]{0,31}$/.test(reason) ? reason : 'other';
  sink.add('AuthorizerDenials', 'Count', 1, { Reason: safe }, [[]]);
  sink.flush();
};

/**
 * Why the authorizer could not decide on a request: its own fault, never the caller's (API
 * Gateway answers 500). `issuer-keys-unavailable`: the issuer's JWKS was never obtained in
 * this container; `unexpected`: any other exception (a defect).
 */
export type AuthorizerFailureReason = 'issuer-keys-unavailable' | 'unexpected';

/** The metric the authorizer's failure alarm watches (see `infra/constructs/observability.ts`). */
export const AUTHORIZER_FAILURES_METRIC = 'AuthorizerFailures';

/**
 * Records one request the authorizer failed on (`AuthorizerFailures`, Count) by reason, with a
 * total across reasons. A rejected token is a denial ({@link recordAuthorizerDenial}), never a
 * failure: Lambda counts both as function errors, this metric tells them apart. Flushed at once.
 */
export const recordAuthorizerFailure = (reason: AuthorizerFailureReason, sink: Metrics = metrics): void => {
  sink.add(AUTHORIZER_FAILURES_METRIC, 'Count', 1, { Reason: reason }, [[]]);
  sink.flush();
};

/** Records one request refused by the request validator (a 400), by operation. Buffered. */
export const recordValidationFailure = (operation: string, sink: Metrics = metrics): void => {
  sink.add('ValidationFailures', 'Count', 1, { Operation: operation }, [[]]);
};
