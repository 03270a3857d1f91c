/** The routes of the configuration history: the devices it knows, a device's takes, one configuration. */
import type { JsonSchema } from '../platform/json-schema.js';
import { encodedNameSchema } from '../platform/names.js';
import { DEVICE_PATH_SCHEMA } from '../trees/config-checks.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { DIFF_FORMATS } from './diff.js';
import { CONFIG_ID_PATTERN } from './keys.js';
import { CONFIG_PAGE_LIMIT } from './read.js';

const ADAPTER_ID = { type: 'string', pattern: '^[A-Za-z0-9 ._-]{1,128}$', description: 'The adapter name' } as const;
/** In the path: percent-encoded (the handlers decode and check them, see `path.ts`). */
const ADAPTER_IN_PATH = encodedNameSchema(128, 'The adapter name');
const CONFIG_ID = {
  type: 'string',
  pattern: CONFIG_ID_PATTERN,
  description: "A configId from the device's history (its batch's start, then the batch id)",
} as const;
const PAGE = pageQuery(CONFIG_PAGE_LIMIT.max, CONFIG_PAGE_LIMIT.default);
const deviceParameters = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['adapterId', 'device', ...Object.keys(extra)],
  properties: { adapterId: ADAPTER_IN_PATH, device: DEVICE_PATH_SCHEMA, ...extra },
});
const READS = { tables: { configs: 'read' }, configsBucket: 'read' } as const;
const UNAVAILABLE = 'The configuration history (its index or its bucket) is unavailable; retry later';

/** Read the history of configurations the batches took. */
export const configRoutes: readonly LiveRoute[] = [
  {
    method: 'GET',
    path: '/configuration_manager/devices',
    operationId: 'listConfigDevices',
    summary: "List an adapter's devices with a configuration in the history: the last one's time, id and grade",
    tag: 'configurations',
    handler: 'configs/handlers/list-devices',
    roles: ['admin', 'apiread'],
    request: {
      queryStringParameters: {
        ...PAGE,
        required: ['adapterId'],
        properties: { ...(PAGE.properties as Record<string, JsonSchema>), adapterId: ADAPTER_ID },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of devices by name: `{ items: [{ device, configId, takenAt, grade? }], next? }`; `next` is absent on the last page',
      400: 'adapterId is missing or invalid, limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
      503: UNAVAILABLE,
    },
    needs: { tables: { configs: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/devices/{adapterId}/{device}/configs',
    operationId: 'listDeviceConfigs',
    summary: "List a device's configurations, newest first",
    tag: 'configurations',
    handler: 'configs/handlers/list-configs',
    roles: ['admin', 'apiread'],
    request: { pathParameters: deviceParameters(), queryStringParameters: PAGE, body: EMPTY_BODY },
    responses: {
      200: 'A page of takes, newest first: `{ items: [{ configId, takenAt, sha256, size, batchId, source, grade? }], next? }`',
      400: 'adapterId, limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
      404: 'The history has no configuration of this device (or they expired)',
      503: UNAVAILABLE,
    },
    needs: { tables: { configs: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/devices/{adapterId}/{device}/configs/{configId}',
    operationId: 'getDeviceConfig',
    summary: 'Get one configuration of a device as NSO gave it, secret members masked',
    tag: 'configurations',
    handler: 'configs/handlers/get-config',
    roles: ['admin', 'apiread'],
    request: { pathParameters: deviceParameters({ configId: CONFIG_ID }), body: EMPTY_BODY },
    responses: {
      200: 'The take and its configuration: `{ configId, adapterId, device, takenAt, sha256, size, batchId, source, grade?, config }`',
      400: 'adapterId or configId is invalid, or a body was sent',
      404: 'The device has no such configuration, or it (or its content) expired',
      422: 'The configuration is larger than an answer may be (`config-too-large`, 5,000,000 bytes of JSON): compare it with another take instead',
      503: UNAVAILABLE,
    },
    needs: READS,
  },
  {
    method: 'GET',
    path: '/configuration_manager/devices/{adapterId}/{device}/configs/{configId}/diff',
    operationId: 'diffDeviceConfigs',
    summary: 'Compare two configurations of a device: an RFC 6902 JSON Patch from `against` to this one, or a unified diff',
    tag: 'configurations',
    handler: 'configs/handlers/diff-configs',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: deviceParameters({ configId: CONFIG_ID }),
      queryStringParameters: {
        type: 'object',
        required: ['against'],
        additionalProperties: false,
        properties: {
          against: { ...CONFIG_ID, description: 'The configId the diff starts from (another take of the same device)' },
          format: { enum: [...DIFF_FORMATS], description: '`json-patch` (default): `application/json-patch+json`; `unified`: `text/x-diff`' },
        },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'The diff from `against` to `configId`, secret values masked: a JSON Patch (`application/json-patch+json`, `[]` when the two are equal) or, with `format=unified`, a unified diff of the two pretty-printed configurations (`text/x-diff`, only the headers when equal)',
      400: 'adapterId, configId, against or format is invalid, an unknown query parameter was sent, or a body was sent',
      404: 'The device has no configuration with one of the two ids, or it (or its content) expired',
      422: 'The unified diff has more changed lines than a diff is made for (`diff-too-large`): ask for the JSON Patch',
      503: UNAVAILABLE,
    },
    needs: READS,
  },
];
