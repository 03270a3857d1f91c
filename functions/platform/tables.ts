/**
 * The DynamoDB tables, as plain data: the CDK stack, the test setup and local mode all create
 * them from here.
 */
import type { TableKey } from './route.js';

export interface KeySpec {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A global secondary index: its keys, and the attributes it copies besides them. */
export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: KeySpec;
  readonly sortKey?: KeySpec;
  /**
   * The attributes the index copies besides the table's and its own keys (projection `INCLUDE`);
   * absent: every attribute (`ALL`). A small projection keeps large attributes out of the index.
   */
  readonly include?: readonly string[];
}

export interface TableSpec {
  readonly partitionKey: KeySpec;
  readonly sortKey?: KeySpec;
  readonly globalIndexes?: readonly IndexSpec[];
  /** Attribute holding an epoch-seconds expiry. */
  readonly timeToLive?: string;
  /**
   * Items are only ever added: functions get `append` access (PutItem of a new key, and reads),
   * never `write`, and the table's resource policy denies every principal the item updates and
   * deletes (infra/stack.ts, `APPEND_ONLY_DENIED`).
   */
  readonly appendOnly?: boolean;
}

/**
 * What the batch list shows of a batch (`byList` copies these): never the `counted` set of
 * chunk numbers (up to 175 KB) nor the write id. An index copies 20 attributes at most: the
 * batch id and start are read from the keys (`pk`, `listSk`), the kind from the tree (a backup has none).
 */
export const BATCH_LIST_ATTRIBUTES = [
  'treeId',
  'version',
  'planId',
  'adapterId',
  'status',
  'total',
  'done',
  'g_pass',
  'g_review',
  'g_fail',
  'g_error',
  'g_out_of_sync',
  'g_kept',
  't_errors',
  't_warnings',
  't_infos',
  't_passes',
  'sync',
  'finished',
  'reason',
] as const;

export const tableSpecs: Readonly<Record<TableKey, TableSpec>> = {
  /**
   * Trees: `pk` is `TREE#<id>` for a tree, `NAME#<name>` for the item that keeps names unique.
   * The sparse `byName` index (only tree items carry `kind`) lists trees sorted by name.
   */
  trees: {
    partitionKey: { name: 'pk', type: 'S' },
    globalIndexes: [{ name: 'byName', partitionKey: { name: 'kind', type: 'S' }, sortKey: { name: 'name', type: 'S' } }],
  },
  /** Adapters by name; `byName` lists them sorted by name. */
  adapters: {
    partitionKey: { name: 'pk', type: 'S' },
    globalIndexes: [{ name: 'byName', partitionKey: { name: 'kind', type: 'S' }, sortKey: { name: 'name', type: 'S' } }],
  },
  /**
   * Idempotency keys (`functions/platform/idempotency.ts`): `pk` is `<operation>#<caller hash>#<key>`;
   * DynamoDB deletes a record some time after `expiresAt` (epoch seconds, 24 h after the answer).
   */
  idempotency: {
    partitionKey: { name: 'pk', type: 'S' },
    timeToLive: 'expiresAt',
  },
  /**
   * Compliance batches and reports (`functions/compliance/store.ts`): one partition per batch
   * (`pk` `B#<batchId>`, `sk` `META` with the set of counted chunks, `PLAN`, `C#…` chunks,
   * `R#<grade>#…` packs of reports, `X#<change>#<device>` delta rows). One grade's reports are a
   * range of sort keys. A plan's history (`functions/compliance/history-store.ts`): trend points
   * (`P#<planId>`, `T#<started>#<batchId>`), device states and points (`P#<planId>#D#<device>`,
   * `STATE` and `H#<at>#<batchId>`). Everything expires after its retention (`expiresAt`).
   * The sparse `byList` index holds the batch items only (`list` = `BATCH`, `listSk` =
   * `<started>#<batchId>`): the batch list, newest first, with what a listed batch shows.
   */
  compliance: {
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    timeToLive: 'expiresAt',
    globalIndexes: [
      {
        name: 'byList',
        partitionKey: { name: 'list', type: 'S' },
        sortKey: { name: 'listSk', type: 'S' },
        include: BATCH_LIST_ATTRIBUTES,
      },
    ],
  },
  /**
   * The audit trail of adapters and applications (`functions/runtime/changelog.ts`): one
   * partition per subject (`pk` `<kind>#<name>`), entries sorted by time (`sk` `<at>#<seq>`),
   * read newest first. Entries never expire and outlive the adapter they describe; nothing
   * updates or deletes one (append-only).
   */
  changelog: {
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    appendOnly: true,
  },
  /**
   * Profiles and the applications' run state (`functions/runtime/profile-store.ts`): `pk` is
   * `PROFILE#<id>` for a profile, `RUNTIME` for the item naming the active profile and each
   * application's state. The sparse `byId` index (only profiles carry `kind`) lists profiles by id.
   */
  profiles: {
    partitionKey: { name: 'pk', type: 'S' },
    globalIndexes: [{ name: 'byId', partitionKey: { name: 'kind', type: 'S' }, sortKey: { name: 'id', type: 'S' } }],
  },
  /**
   * The configuration history's index (`functions/configs/store.ts`): per device (`pk`
   * `D#<adapterId>#<device>`) one entry per take (`sk` `C#<configId>`, newest last), and per
   * adapter (`pk` `A#<adapterId>`, `sk` the device) the device's last take. Entries expire after
   * the active profile's `configRetentionDays` (`expiresAt`); the content is in S3.
   */
  configs: {
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    timeToLive: 'expiresAt',
  },
};

/** The environment variable that carries a table's name to the functions. */
export const tableEnv = (key: TableKey): string => `${key.toUpperCase()}_TABLE`;
