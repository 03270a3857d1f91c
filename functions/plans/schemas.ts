/** The request bodies of the plan routes. */
import type { JsonSchema } from '../platform/json-schema.js';
import { startBatchBody } from '../trees/schemas.js';
import { PLAN_ID_PATTERN } from './model.js';

const batch = startBatchBody.properties as Record<string, JsonSchema>;

/**
 * A plan's devices at most, by count; their stored JSON is also held to {@link PLAN_DEVICES_BYTES}
 * (the plan is one DynamoDB item of at most 400 KB). A plan of more devices names none: it checks
 * every device of its version.
 */
export const PLAN_DEVICES_MAX = 10_000;
export const PLAN_DEVICES_BYTES = 300_000;

export const PLAN_ID = { type: 'string', pattern: PLAN_ID_PATTERN, description: 'The planId that creating the plan answered' } as const;

/** `POST` and `PUT …/compliance_plans`: a plan's fields. */
export const planBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'treeId', 'version', 'adapterId', 'enabled'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128, pattern: '\\S', description: 'For people: unique among plans without regard to case' },
    treeId: batch['treeId']!,
    version: batch['version']!,
    adapterId: batch['adapterId']!,
    devices: {
      ...batch['devices']!,
      maxItems: PLAN_DEVICES_MAX,
      description: `Only these devices (each must be assigned to a node of the version; at most ${PLAN_DEVICES_MAX} and ${PLAN_DEVICES_BYTES} bytes of names); default every device of the version when the plan runs`,
    },
    sync: batch['sync']!,
    schedule: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description:
        'An EventBridge Scheduler expression: `cron(minutes hours day-of-month month day-of-week year)` or `rate(value unit)`; absent: the plan runs only when asked',
    },
    timezone: { type: 'string', minLength: 1, maxLength: 50, description: 'The IANA time zone `schedule` is read in (default `UTC`)' },
    enabled: { type: 'boolean', description: 'A disabled plan is not run by its schedule (a user may still run it)' },
  },
};
