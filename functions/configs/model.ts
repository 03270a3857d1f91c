/**
 * Configuration history: every configuration a batch fetches is kept (content-addressed,
 * compressed, in S3) with an index entry per take in DynamoDB. This module is the contract
 * between the engine that records configurations and the store that keeps them.
 */
import type { JsonValue } from '../trees/config-model.js';

/** What fetched a configuration. */
export const CONFIG_SOURCES = ['compliance', 'backup'] as const;
export type ConfigSourceKind = (typeof CONFIG_SOURCES)[number];

/** The batch a configuration was taken by. */
export interface ConfigSource {
  readonly kind: ConfigSourceKind;
  readonly batchId: string;
  /** When the batch started (ISO 8601): with the batch id, it makes the take's key the same on every run of it. */
  readonly batchStarted: string;
}

/** One take of a device's configuration, as the history lists it. */
export interface ConfigEntry {
  readonly configId: string;
  readonly adapterId: string;
  readonly device: string;
  /** When it was fetched (ISO 8601). */
  readonly takenAt: string;
  /** SHA-256 (hex) of the configuration's canonical JSON. */
  readonly sha256: string;
  /** Bytes of the canonical JSON. */
  readonly size: number;
  readonly batchId: string;
  readonly source: ConfigSourceKind;
  /** The grade the batch gave it (compliance batches; `out-of-sync` when NSO's copy differed from the device). */
  readonly grade?: string;
}

/** What recording a configuration stored. */
export interface RecordedConfig {
  readonly configId: string;
  readonly sha256: string;
  readonly size: number;
  /** Whether its content was uploaded (false: the device's previous take had the same content). */
  readonly uploaded: boolean;
}

/** Keeps the configurations batches fetch. */
export interface ConfigArchive {
  /**
   * Records one take: uploads the content unless the device's previous take had the same, then
   * writes the index entry. The same source and device always give the same `configId`, so a
   * batch that runs a device again after a crash overwrites its entry instead of adding one.
   * Throws when the store cannot be reached (the engine retries the chunk): an index entry is
   * written only after its content is stored.
   */
  record(take: {
    readonly adapterId: string;
    readonly device: string;
    readonly config: JsonValue;
    readonly source: ConfigSource;
    readonly takenAt: Date;
    readonly grade?: string;
  }): Promise<RecordedConfig>;
}
