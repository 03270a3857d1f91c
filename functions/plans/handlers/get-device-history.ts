/** GET /configuration_manager/compliance_plans/{planId}/devices/{device}: a device's points and rule states in a plan. */
import { HISTORY_PAGE_LIMITS, queryTime, readDeviceHistory } from '../../compliance/history-read.js';
import { createHistoryStore } from '../../compliance/history-store.js';
import { createComplianceStore } from '../../compliance/store.js';
import { getCompliancePlanDevice as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';

const history = createHistoryStore(createComplianceStore());

export const handler = httpHandler({ operation: 'getCompliancePlanDevice', validate }, async (event) => {
  const { planId, device } = event.pathParameters as { planId: string; device: string };
  const { from, to, limit, cursor } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const answer = await readDeviceHistory(history, planId, device, {
    ...(from ? { from: queryTime(from, 'from')! } : {}),
    ...(to ? { to: queryTime(to, 'to')! } : {}),
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.device.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
