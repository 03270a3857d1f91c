/** The routes of remediation runs: start one on a completed compliance batch, follow it, read its devices, roll it back. */
import { BATCH_ID_PATTERN, MAX_BATCH_DEVICES } from '../compliance/model.js';
import type { JsonSchema } from '../platform/json-schema.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { CONFIG_LIMITS, RULE_ID_PATTERN_SOURCE } from '../trees/config-checks.js';
import { NODE_NAME } from './patch.js';
import { REMEDIATION_ID_PATTERN, REMEDIATION_MODES } from './model.js';
import { DEVICE_PAGE_LIMIT, LIST_KEY_LIMITS, MAX_RULE_IDS } from './service.js';

/** A node name without its anchors, and a schema path: node names joined with `/` (ASCII, so its bytes are its characters). */
const NODE = NODE_NAME.source.slice(1, -1);
const SCHEMA_PATH = `^${NODE}(?:/${NODE})*$`;

const BATCH_ID = { type: 'string', pattern: BATCH_ID_PATTERN, description: 'The batchId of a completed compliance batch' } as const;
const REMEDIATION_PARAMS: JsonSchema = {
  type: 'object',
  required: ['remediationId'],
  properties: { remediationId: { type: 'string', pattern: REMEDIATION_ID_PATTERN, description: 'The remediationId that starting the run answered' } },
};

/** `POST …/batches/{batchId}/remediations`. */
export const startRemediationBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['mode'],
  properties: {
    mode: {
      type: 'string',
      enum: [...REMEDIATION_MODES],
      description:
        '`dry-run`: NSO says what it would send to each device (`dry-run=native`), nothing is committed; `apply`: each device is committed, its rollback id recorded, then graded again',
    },
    devices: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_DEVICES,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.deviceName },
      description:
        'Only these devices of the batch, each with failing rules in its report (any grade but `error` and `out-of-sync`); default every device the batch graded `fail`',
    },
    ruleIds: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_RULE_IDS,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.ruleId, pattern: RULE_ID_PATTERN_SOURCE },
      description: "Only these rules of the batch's plan are remediated (every rule is still checked); default every failing rule",
    },
    commitQueue: { type: 'boolean', default: false, description: "`apply` only: commit through NSO's commit queue (`commit-queue=sync`)" },
    listKeys: {
      type: 'object',
      maxProperties: LIST_KEY_LIMITS.paths,
      propertyNames: { minLength: 1, maxLength: LIST_KEY_LIMITS.pathLength, pattern: SCHEMA_PATH },
      additionalProperties: {
        type: 'array',
        minItems: 1,
        maxItems: LIST_KEY_LIMITS.keys,
        uniqueItems: true,
        items: { type: 'string', maxLength: LIST_KEY_LIMITS.keyLength, pattern: NODE_NAME.source },
      },
      description:
        'The key leaves of the lists the fixes edit: schema path (node names joined with `/`, e.g. `tailf-ned-cisco-ios:interface/GigabitEthernet`) to key names (`["name"]`). A rule that edits a list whose keys are not given is reported unremediable',
    },
  },
};

export const remediationRoutes: readonly LiveRoute[] = [
  {
    method: 'POST',
    path: '/configuration_manager/compliance_reports/batches/{batchId}/remediations',
    operationId: 'startRemediation',
    summary: "Fix what a compliance batch found through the adapter's NSO: starts a dry-run or apply remediation run",
    tag: 'compliance',
    handler: 'remediation/handlers/start',
    roles: ['admin'],
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      body: startRemediationBody,
    },
    responses: {
      202: 'The run started: `{ remediationId, status: "running", devices }`; its path in `Location`',
      400: "The request is invalid (the Idempotency-Key header included), names devices not in the batch or without failing rules, or rule ids not in the batch's plan (the first ones named)",
      404: 'No batch has this id (or it expired), or its adapter no longer exists',
      409: 'The batch is still running or failed (`batch-not-completed`), is a backup (`backup-batch`), has no failing device (`nothing-to-remediate`), its adapter is stopped (`adapter-stopped`), an `apply` run or rollback of the adapter is running (`remediation-running`, naming it), or a request with the same Idempotency-Key is still running',
      422: 'The Idempotency-Key was already used for a different request',
      503: 'A store or the remediation engine is unavailable; retry later (nothing was started)',
    },
    needs: { tables: { compliance: 'write', adapters: 'read', idempotency: 'write', changelog: 'append' }, startsRemediation: true },
    // A start reads the batch's reports (up to 50,000 devices, a thousand a query).
    timeoutSeconds: 28,
  },
  {
    method: 'GET',
    path: '/configuration_manager/remediations/{remediationId}',
    operationId: 'getRemediation',
    summary: 'Get a remediation run: status, mode, totals, who started it and when, and its rollback',
    tag: 'compliance',
    handler: 'remediation/handlers/get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: REMEDIATION_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The run: `{ remediationId, batchId, adapterId, treeId, version, mode, commitQueue, ruleIds?, status, devices, totals, startedBy, started, finished?, reason?, rollback? }`',
      400: 'remediationId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No run has this id (or it expired with its batch)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/remediations/{remediationId}/devices',
    operationId: 'listRemediationDevices',
    summary: "List a run's devices by name: the patch sent, NSO's dry-run output, the rollback id, the grade after, the error",
    tag: 'compliance',
    handler: 'remediation/handlers/list-devices',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: REMEDIATION_PARAMS,
      // Keep in step with DEVICE_PAGE_LIMIT in functions/remediation/service.ts.
      queryStringParameters: pageQuery(DEVICE_PAGE_LIMIT.max, DEVICE_PAGE_LIMIT.default),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of devices: `{ items, next? }`, secrets masked in patches, dry-run output and errors; `next` is absent on the last page',
      400: 'remediationId, limit or cursor is invalid (a cursor of another run included), an unknown query parameter was sent, or a body was sent',
      404: 'No run has this id (or it expired with its batch)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'POST',
    path: '/configuration_manager/remediations/{remediationId}/rollback',
    operationId: 'startRemediationRollback',
    summary: "Undo an applied run: applies each device's recorded rollback file through NSO, newest commit first",
    tag: 'compliance',
    handler: 'remediation/handlers/rollback',
    roles: ['admin'],
    request: { pathParameters: REMEDIATION_PARAMS, body: EMPTY_BODY },
    responses: {
      202: 'The rollback started: `{ remediationId, status: "running" }`; the run\'s path in `Location` (its `rollback` member follows it)',
      400: 'remediationId is not 24 lowercase hexadecimal characters, or a body other than `{}` was sent',
      404: 'No run has this id (or it expired with its batch), or its adapter no longer exists',
      409: 'The run is a dry-run or still running, or its rollback is running, completed or failed after reaching devices (`rollback-refused`); an `apply` run or rollback of the adapter is running (`remediation-running`, naming it); or its adapter is stopped (`adapter-stopped`)',
      503: 'A store or the remediation engine is unavailable; retry later',
    },
    needs: { tables: { compliance: 'write', adapters: 'read', changelog: 'append' }, startsRemediation: true },
    // A rollback reads the run's devices for the rollback ids its audit entry lists.
    timeoutSeconds: 28,
  },
];
