/** The routes that read a compliance plan's history (kept by compliance: functions/compliance/history-store.ts). */
import { timeRangeQuery } from '../compliance/routes.js';
import { DEVICE_POINT_COLUMNS, TREND_COLUMNS } from '../compliance/history-columns.js';
import { HISTORY_PAGE_LIMITS } from '../compliance/history-read.js';
import type { JsonSchema } from '../platform/json-schema.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { DEVICE_PATH_SCHEMA } from '../trees/config-checks.js';
import { PLAN_ID_PATTERN } from './model.js';

const PLAN_ID = { type: 'string', pattern: PLAN_ID_PATTERN, description: 'The planId that creating the plan answered' } as const;

/** A page query with a time range. */
const rangedPage = (limits: { readonly max: number; readonly default: number }, of: string): JsonSchema => {
  const page = pageQuery(limits.max, limits.default);
  return { ...page, properties: { ...(page.properties as Record<string, JsonSchema>), ...timeRangeQuery(of) } };
};

/** A plan's trend and a device's history in it. */
export const planHistoryRoutes: readonly LiveRoute[] = [
  {
    method: 'GET',
    path: '/configuration_manager/compliance_plans/{planId}/trend',
    operationId: 'getCompliancePlanTrend',
    summary: "A compliance plan's trend: per batch, its time, status, device counts by grade and delta counts, oldest first",
    tag: 'compliance',
    handler: 'plans/handlers/get-trend',
    roles: ['admin', 'apiread'],
    csv: { columns: TREND_COLUMNS.map((c) => c.name) },
    request: {
      pathParameters: { type: 'object', required: ['planId'], properties: { planId: PLAN_ID } },
      queryStringParameters: rangedPage(HISTORY_PAGE_LIMITS.trend, 'start (`started`)'),
      body: EMPTY_BODY,
    },
    responses: {
      200: '`{ planId, items, next? }`: trend points `{ batchId, kind, status, started, finished?, total, grades, totals, delta? }`, oldest first (empty for a plan without batches in the range). As CSV (`Accept: text/csv` or `format=csv`): every point in the range, counts flat, streamed',
      400: 'planId, from, to, limit, cursor or format is invalid, limit or cursor was sent with format csv, an unknown query parameter was sent, or a body was sent',
      404: "No plan has this id and no trend point of it is kept (a deleted plan's trend is read until it expires)",
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_plans/{planId}/devices/{device}',
    operationId: 'getCompliancePlanDevice',
    summary: "A device's history in a compliance plan: its grades over time, newest first, and per rule firstFailedAt and lastChangedAt",
    tag: 'compliance',
    handler: 'plans/handlers/get-device-history',
    roles: ['admin', 'apiread'],
    csv: { columns: DEVICE_POINT_COLUMNS.map((c) => c.name) },
    request: {
      pathParameters: {
        type: 'object',
        required: ['planId', 'device'],
        properties: {
          planId: PLAN_ID,
          device: DEVICE_PATH_SCHEMA,
        },
      },
      queryStringParameters: rangedPage(HISTORY_PAGE_LIMITS.device, 'check time (`at`)'),
      body: EMPTY_BODY,
    },
    responses: {
      200: '`{ planId, device, points, rules, next? }`: points `{ batchId, at, grade, score?, failing?, reportId? }` newest first; rules `{ ruleId, failing, firstFailedAt?, lastChangedAt }` (failing first). As CSV (`Accept: text/csv` or `format=csv`): every point in the range, streamed; the rules stay in the JSON answer',
      400: 'planId, device, from, to, limit, cursor or format is invalid, limit or cursor was sent with format csv, an unknown query parameter was sent, or a body was sent',
      404: 'The device has no history in the plan (no completed batch of the plan checked it, or its history expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
];
