/**
 * GET /configuration_manager/compliance_plans/{planId}/trend: a page of a plan's trend points as
 * JSON, or every point in the range as streamed CSV; 404 for a plan id with neither a plan nor
 * a trend point (a deleted plan's history is read until it expires).
 */
import { exportTrend, hasTrend, HISTORY_PAGE_LIMITS, queryRange, readTrend } from '../../compliance/history-read.js';
import { TREND_COLUMNS } from '../../compliance/history-columns.js';
import { createHistoryStore } from '../../compliance/history-store.js';
import { createComplianceStore } from '../../compliance/store.js';
import { getCompliancePlanTrend as validate } from '../../generated/validators.js';
import { attachmentName, csvExportAsked, csvResponse } from '../../platform/csv.js';
import { NotFound } from '../../platform/problem.js';
import { json } from '../../runtime/http.js';
import { streamingHttpHandler } from '../../runtime/streaming-http.js';
import { createPlanStore } from '../store.js';

const history = createHistoryStore(createComplianceStore());
const plans = createPlanStore();

export const handler = streamingHttpHandler({ operation: 'getCompliancePlanTrend', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  const { from, to, limit, cursor } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const range = queryRange({ from, to });
  const csv = csvExportAsked(event);
  if (!(await plans.get(planId)) && !(await hasTrend(history, planId)))
    throw new NotFound(`No compliance plan has the id '${planId}', and no history of one is kept.`);
  if (csv) return csvResponse(TREND_COLUMNS, exportTrend(history, planId, range), attachmentName([planId, 'trend']));
  const answer = await readTrend(history, planId, {
    ...range,
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.trend.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
