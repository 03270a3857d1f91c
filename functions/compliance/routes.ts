/** The routes of compliance batches and reports. */
import { GRADES } from './grading.js';
import { DELTA_CHANGES } from './history-model.js';
import { BATCH_COLUMNS, DELTA_COLUMNS } from './history-columns.js';
import { HISTORY_PAGE_LIMITS } from './history-read.js';
import { BATCH_ID_PATTERN, BATCH_KINDS, BATCH_STATUSES, REPORT_ID_PATTERN } from './model.js';
import { REPORT_COLUMNS } from './report-columns.js';
import type { JsonSchema } from '../platform/json-schema.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { startBatchBody } from '../trees/schemas.js';

const BATCH_ID = { type: 'string', pattern: BATCH_ID_PATTERN, description: 'The batchId that starting the batch answered' } as const;
const { adapterId, devices } = startBatchBody.properties as Record<string, JsonSchema>;
/** `POST /configuration_manager/backups`: the adapter, and the devices when not all of its NSO's. */
const startBackupBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['adapterId'],
  properties: {
    adapterId: adapterId!,
    devices: {
      ...devices!,
      description:
        "Only these devices (a name NSO does not know gets a report with grade `error`); default every device the adapter's NSO knows, read a page at a time",
    },
  },
};

/** An ISO 8601 date or date and time (checked again by parsing it): the `from`/`to` of the history lists. */
export const TIME_QUERY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?$';
/** `from` and `to` query parameters over a time of the rows listed. */
export const timeRangeQuery = (of: string): Record<string, JsonSchema> => ({
  from: { type: 'string', pattern: TIME_QUERY_PATTERN, description: `Only rows whose ${of} is at or after this ISO 8601 date or time` },
  to: { type: 'string', pattern: TIME_QUERY_PATTERN, description: `Only rows whose ${of} is at or before this ISO 8601 date or time` },
});

const REPORT_ID = { type: 'string', pattern: REPORT_ID_PATTERN, description: "A reportId from the batch's reports" } as const;

/** Start a batch, follow it, read its reports. */
export const complianceRoutes: readonly LiveRoute[] = [
  {
    method: 'POST',
    path: '/configuration_manager/compliance_reports',
    operationId: 'startComplianceBatch',
    summary: 'Check devices against a tree version through an adapter: starts a compliance batch',
    tag: 'compliance',
    handler: 'compliance/handlers/start',
    roles: ['admin'],
    request: { body: startBatchBody },
    responses: {
      202: 'The batch started: `{ batchId, status: "running", total }`; its path in `Location`',
      400: 'The request is invalid (the Idempotency-Key header included), names devices not assigned (listed or selected) to a node of the version, or the version assigns more devices than a batch takes (50,000)',
      404: 'No tree has this id, it has no such version, or no adapter has this name',
      409: 'The adapter is stopped (`adapter-stopped`), a device is chosen by two nodes (`device-on-two-nodes`: listed on one and selected by another, or selected by two; the detail names it and both nodes), or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      413: 'The exemptions that apply to the batch do not fit in it with the version (delete or shorten some)',
      422: 'The Idempotency-Key was already used for a different request',
      502: "The NSO's inventory (read when a node or an exemption selects devices) could not be read: a page answered an error, an unusable body, or more entries than asked (nothing was started)",
      503: 'A store or the compliance engine is unavailable; retry later (nothing was started)',
      504: 'The NSO did not answer a page of its inventory in time (nothing was started)',
    },
    needs: {
      tables: { trees: 'read', adapters: 'read', compliance: 'write', idempotency: 'write' },
      secrets: 'read',
      orchestrator: true,
      startsCompliance: true,
    },
    timeoutSeconds: 28,
  },
  {
    method: 'POST',
    path: '/configuration_manager/backups',
    operationId: 'startBackupBatch',
    summary: "Keep the configuration of an adapter's devices in the history, grading nothing: starts a backup batch",
    tag: 'compliance',
    handler: 'compliance/handlers/start-backup',
    roles: ['admin'],
    request: { body: startBackupBody },
    responses: {
      202: 'The batch started: `{ batchId, status: "running", total, skipped? }` (`skipped`: the devices NSO knows whose names cannot be kept, `{ count, reason, examples }`); its path (a compliance batch path: the same status and report routes) in `Location`',
      400: 'The request is invalid (the Idempotency-Key header included), or `devices` is absent and the NSO knows more devices than a batch takes (50,000)',
      404: 'No adapter has this name',
      409: 'The adapter is stopped (`adapter-stopped`), or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      422: 'The NSO knows no devices (`no-devices`), or the Idempotency-Key was already used for a different request',
      502: "The NSO's device list could not be read: a page answered an error, an unusable body, or more devices than asked (nothing was started)",
      503: 'A store or the compliance engine is unavailable; retry later (nothing was started)',
      504: 'The NSO did not answer a page of its device list in time (nothing was started)',
    },
    needs: { tables: { adapters: 'read', compliance: 'write', idempotency: 'write' }, secrets: 'read', orchestrator: true, startsCompliance: true },
    timeoutSeconds: 28,
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches',
    operationId: 'listComplianceBatches',
    summary: 'List compliance and backup batches, newest first, optionally filtered',
    tag: 'compliance',
    handler: 'compliance/handlers/list-batches',
    roles: ['admin', 'apiread'],
    csv: { columns: BATCH_COLUMNS.map((c) => c.name) },
    request: {
      queryStringParameters: {
        ...pageQuery(HISTORY_PAGE_LIMITS.batches.max, HISTORY_PAGE_LIMITS.batches.default),
        properties: {
          ...(pageQuery(HISTORY_PAGE_LIMITS.batches.max, HISTORY_PAGE_LIMITS.batches.default).properties as Record<string, JsonSchema>),
          planId: { type: 'string', pattern: BATCH_ID_PATTERN, description: 'Only the batches of this compliance plan' },
          treeId: { type: 'string', pattern: BATCH_ID_PATTERN, description: 'Only the batches of this tree' },
          adapterId: { ...adapterId!, description: 'Only the batches through this adapter' },
          status: { type: 'string', enum: [...BATCH_STATUSES], description: 'Only batches in this status' },
          kind: { type: 'string', enum: [...BATCH_KINDS], description: 'Only batches of this kind' },
          ...timeRangeQuery('start (`started`)'),
        },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of batches, newest first: `{ items, next? }` (each item as `GET …/batches/{batchId}` answers it). A page may hold fewer items than `limit` and still have a `next`: each page is one bounded read. Batches stored before the list existed are not listed. As CSV (`Accept: text/csv` or `format=csv`): every batch the filters select, one row each, streamed',
      400: 'A filter, limit, cursor or format is invalid (a cursor is valid only with the filters it was issued for), limit or cursor was sent with format csv, an unknown query parameter was sent, or a body was sent',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches/{batchId}/delta',
    operationId: 'getComplianceBatchDelta',
    summary: "A plan batch's delta against the plan's previous completed batch: devices newly failing, fixed, changed, new and gone",
    tag: 'compliance',
    handler: 'compliance/handlers/get-delta',
    roles: ['admin', 'apiread'],
    csv: { columns: DELTA_COLUMNS.map((c) => c.name) },
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      queryStringParameters: {
        ...pageQuery(HISTORY_PAGE_LIMITS.delta.max, HISTORY_PAGE_LIMITS.delta.default),
        properties: {
          ...(pageQuery(HISTORY_PAGE_LIMITS.delta.max, HISTORY_PAGE_LIMITS.delta.default).properties as Record<string, JsonSchema>),
          change: { type: 'string', enum: [...DELTA_CHANGES], description: 'Only the devices of this class' },
        },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: '`{ batchId, planId, previousBatchId?, counts, goneUnknown?, items, next? }`: the counts by class and a page of rows `{ device, change, from?, to?, reportId? }` by class, then device. As CSV (`Accept: text/csv` or `format=csv`): every row (of the class asked), streamed; the counts stay in the JSON answer',
      400: 'batchId, change, limit, cursor or format is invalid, limit or cursor was sent with format csv, an unknown query parameter was sent, or a body was sent',
      404: 'No batch has this id (or it expired)',
      409: 'The batch ran for no plan (`no-plan`), or has not completed (`batch-not-completed`: running, or failed)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches/{batchId}',
    operationId: 'getComplianceBatch',
    summary: 'Get a compliance batch: status, progress, rule totals and device counts by grade',
    tag: 'compliance',
    handler: 'compliance/handlers/get-batch',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'The batch: `{ batchId, kind, treeId?, version?, adapterId, status, total, done, totals, grades, sync, started, finished?, reason? }`; `kind` is `compliance` (with its tree version) or `backup`',
      400: 'batchId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No batch has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches/{batchId}/reports',
    operationId: 'listComplianceReports',
    summary: "List a batch's device reports (also while it runs), optionally of one grade",
    tag: 'compliance',
    handler: 'compliance/handlers/list-reports',
    roles: ['admin', 'apiread'],
    csv: { columns: REPORT_COLUMNS.map((c) => c.name) },
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      // Keep in step with REPORT_PAGE_LIMIT in functions/compliance/read.ts.
      queryStringParameters: {
        ...pageQuery(200, 50),
        properties: {
          ...(pageQuery(200, 50).properties as Record<string, JsonSchema>),
          grade: { type: 'string', enum: [...GRADES], description: 'Only reports of this grade' },
        },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of reports: `{ items, next? }`; `next` is absent on the last page. As CSV (`Accept: text/csv` or `format=csv`): every report of the batch (of the grade asked), one row each, streamed',
      400: 'batchId, grade, limit, cursor or format is invalid, limit or cursor was sent with format csv, an unknown query parameter was sent, or a body was sent',
      404: 'No batch has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/{reportId}',
    operationId: 'getComplianceReport',
    summary: "Get one device's compliance report",
    tag: 'compliance',
    handler: 'compliance/handlers/get-report',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['reportId'], properties: { reportId: REPORT_ID } },
      body: EMPTY_BODY,
    },
    responses: {
      200: "The report: `{ reportId, batchId, device, treeId?, version?, node?, grade, score?, totals, issues, reason?, sync, diff?, configId?, checkedAt }` (a backup's report has no tree version or node)",
      400: 'reportId is not a report id (batch id, "-", then a grade initial and 16 digits, or 32 hexadecimal digits for a report stored before packs), or a body was sent',
      404: 'No report has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
];
