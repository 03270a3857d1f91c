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
  /** 404 unless a plan, or a kept trend point, has the id: asked only when no point answers for it. */
  const known = async (): Promise<void> => {
    if (!(await plans.get(planId)) && !(await hasTrend(history, planId)))
      throw new NotFound(`No compliance plan has the id '${planId}', and no history of one is kept.`);
  };
  if (csvExportAsked(event)) {
    await known();
    return csvResponse(TREND_COLUMNS, exportTrend(history, planId, range), attachmentName([planId, 'trend']));
  }
  const answer = await readTrend(history, planId, {
    ...range,
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.trend.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  // A page with points is the plan's history: no other read. An empty first page may be an unknown id.
  if (answer.items.length === 0 && cursor === undefined) await known();
  return json(200, answer);
});
