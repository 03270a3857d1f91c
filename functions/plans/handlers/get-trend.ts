/** GET /configuration_manager/compliance_plans/{planId}/trend: a page of a plan's trend points. */
import { HISTORY_PAGE_LIMITS, queryTime, readTrend } from '../../compliance/history-read.js';
import { createHistoryStore } from '../../compliance/history-store.js';
import { createComplianceStore } from '../../compliance/store.js';
import { getCompliancePlanTrend as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';

const history = createHistoryStore(createComplianceStore());

export const handler = httpHandler({ operation: 'getCompliancePlanTrend', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  const { from, to, limit, cursor } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const answer = await readTrend(history, planId, {
    ...(from ? { from: queryTime(from, 'from')! } : {}),
    ...(to ? { to: queryTime(to, 'to')! } : {}),
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.trend.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
