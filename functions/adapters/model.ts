import type { LogLevel } from '../platform/logger.js';

/** How much the relay logs of the calls through an adapter (`info` when never set). */
export type AdapterLogLevel = LogLevel;
export const DEFAULT_ADAPTER_LOG_LEVEL: AdapterLogLevel = 'info';

/**
 * How the adapter's NSO takes commit parameters (dry-run, rollback label…) on a write: `query`,
 * NSO's separate query parameters (`?dry-run=native&rollback-id=true`); `params`, NSO 6.7's one
 * `params` query value. Absent: `query`.
 */
export const NSO_COMMIT_PARAMS = ['query', 'params'] as const;
export type NsoCommitParams = (typeof NSO_COMMIT_PARAMS)[number];

/** Whether the relay and compliance may use an adapter: `STOPPED` refuses them (409 `adapter-stopped`). */
export type AdapterState = 'RUNNING' | 'STOPPED';

/**
 * An adapter: the connection record of one orchestrator. Its secret fields hold `$VAULT_`
 * references only; the values live in the secrets store.
 */
export interface Adapter {
  readonly name: string;
  readonly type: 'nso';
  /** Origin of the orchestrator: http(s), host, optional port, no path beyond `/`. */
  readonly baseUrl: string;
  readonly auth: { readonly type: 'basic'; readonly username: string /** `$VAULT_<path>` reference */; readonly password: string };
  /** Per-call timeout; always below the function's own deadline. */
  readonly timeoutMs?: number;
  /** Concurrent configuration fetches of one compliance batch through this adapter; default the service's (10). */
  readonly complianceConcurrency?: number;
  /** How remediation sends commit parameters to this NSO; absent: `query` (see {@link NSO_COMMIT_PARAMS}). */
  readonly nsoCommitParams?: NsoCommitParams;
  /** Absent only on records written before adapters had a lifecycle: those run. */
  readonly state?: AdapterState;
  /** The relay's log level for calls through this adapter; absent only on records written before it existed (`info`). */
  readonly logLevel?: AdapterLogLevel;
  readonly created: string;
  readonly lastUpdated: string;
}

/** Resolves a `$VAULT_` reference to its secret value at call time (defined beside its implementation). */
export type { SecretResolver } from '../outbound/secrets/resolve.js';
