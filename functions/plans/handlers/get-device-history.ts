/**
 * GET /configuration_manager/compliance_plans/{planId}/devices/{device}: a device's points and
 * rule states in a plan as JSON, or every point in the range as streamed CSV.
 */
import { DEVICE_POINT_COLUMNS } from '../../compliance/history-columns.js';
import { exportDeviceHistory, HISTORY_PAGE_LIMITS, queryRange, readDeviceHistory } from '../../compliance/history-read.js';
import { createHistoryStore } from '../../compliance/history-store.js';
import { createComplianceStore } from '../../compliance/store.js';
import { getCompliancePlanDevice as validate } from '../../generated/validators.js';
import { attachmentName, csvExportAsked, csvResponse } from '../../platform/csv.js';
import { json } from '../../runtime/http.js';
import { deviceFromPath } from '../../trees/config-checks.js';
import { streamingHttpHandler } from '../../runtime/streaming-http.js';

const history = createHistoryStore(createComplianceStore());

export const handler = streamingHttpHandler({ operation: 'getCompliancePlanDevice', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  const device = deviceFromPath((event.pathParameters as { device: string }).device);
  const { from, to, limit, cursor } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const range = queryRange({ from, to });
  if (csvExportAsked(event)) {
    return csvResponse(DEVICE_POINT_COLUMNS, await exportDeviceHistory(history, planId, device, range), attachmentName([planId, device, 'history']));
  }
  const answer = await readDeviceHistory(history, planId, device, {
    ...range,
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.device.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
