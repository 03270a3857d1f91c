/** The request schemas of the exemption routes. */
import type { JsonSchema } from '../platform/json-schema.js';
import { CONFIG_LIMITS, DEVICE_NAME_PATTERN_SOURCE, RULE_ID_PATTERN_SOURCE } from '../trees/config-checks.js';
import { TREE_ID_SCHEMA } from '../trees/schemas.js';
import { selectorSchema } from '../trees/selectors.js';
import { EXEMPTION_ID_PATTERN, EXEMPTION_LIMITS } from './model.js';

export const EXEMPTION_ID = { type: 'string', pattern: EXEMPTION_ID_PATTERN, description: 'The exemptionId that creating the exemption answered' } as const;

/** RFC 3339 date-time with an offset (`Z` or `±hh:mm`); the service checks the date is a real one. */
export const UNTIL_PATTERN_SOURCE = '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,9})?(Z|[+-]\\d\\d:\\d\\d)$';

/** How far ahead `until` may be: an exemption is a dated waiver, not a permanent one. */
export const EXEMPTION_MAX_YEARS = 5;

export const exemptionParams: JsonSchema = {
  type: 'object',
  required: ['treeId', 'exemptionId'],
  properties: { treeId: TREE_ID_SCHEMA, exemptionId: EXEMPTION_ID },
};

/** `POST` and `PUT …/exemptions`: exactly one of `devices` and `selector` (checked by the service, which names the field). */
export const exemptionBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ruleId', 'until', 'reason'],
  properties: {
    ruleId: { type: 'string', pattern: RULE_ID_PATTERN_SOURCE, description: 'The id of the rule exempted (in any version of the tree)' },
    devices: {
      type: 'array',
      minItems: 1,
      maxItems: EXEMPTION_LIMITS.devices,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.deviceName, pattern: DEVICE_NAME_PATTERN_SOURCE },
      description: `NSO device names the rule is exempted on (1 to ${EXEMPTION_LIMITS.devices}, no repeats); or give \`selector\``,
    },
    selector: { ...selectorSchema, description: 'The devices the rule is exempted on, chosen when a batch starts; or give `devices`' },
    until: {
      type: 'string',
      pattern: UNTIL_PATTERN_SOURCE,
      description: `ISO 8601 date-time with an offset (\`2027-03-31T23:59:59Z\`), in the future and at most ${EXEMPTION_MAX_YEARS} years ahead: the rule counts again from then on`,
    },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: EXEMPTION_LIMITS.reason,
      pattern: '\\S',
      description: 'Why: shown on every report the exemption applies to',
    },
  },
};
