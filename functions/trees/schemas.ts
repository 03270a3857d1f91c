/**
 * The JSON Schemas of the version, node, export and import routes (used by the route table).
 * Shapes and per-field limits are checked here, at the edge; what needs the stored version
 * (variables, rule ids along paths, devices on one node, sizes) is checked by config-checks.ts.
 */
import type { JsonSchema } from '../platform/json-schema.js';
import { RULE_MATCHES, RULE_MODES, SEVERITIES } from './config-model.js';
import { CONFIG_LIMITS, DEVICE_NAME_PATTERN_SOURCE, RULE_ID_PATTERN_SOURCE, VARIABLE_NAME_PATTERN_SOURCE } from './config-checks.js';
import { PATH_NAME_PATTERN_SOURCE } from '../platform/names.js';
import { LABEL_PATTERN_SOURCE, TREE_LIMITS } from './model.js';
import { SELECTOR_LIMITS, selectorSchema } from './selectors.js';

/** Path segments arrive percent-encoded: the handler decodes them and applies the name rule. */
const SEGMENT = (description: string): JsonSchema => ({ type: 'string', minLength: 1, maxLength: 512, description });

export const TREE_ID_SCHEMA = { type: 'string', pattern: '^[0-9a-f]{24}$' } as const;

export const treeParams: JsonSchema = { type: 'object', required: ['treeId'], properties: { treeId: TREE_ID_SCHEMA } };

export const versionParams: JsonSchema = {
  type: 'object',
  required: ['treeId', 'version'],
  properties: {
    treeId: TREE_ID_SCHEMA,
    version: SEGMENT('The version label, percent-encoded; `label~2` names the second version of a seeded tree that repeats `label`'),
  },
};

export const nodeParams: JsonSchema = {
  type: 'object',
  required: ['treeId', 'version', 'nodePath'],
  properties: {
    ...(versionParams['properties'] as Record<string, JsonSchema>),
    nodePath: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: `The node's path from the root, e.g. base/wan/pe-routers (each segment percent-encoded; at most ${CONFIG_LIMITS.nodeDepth} levels)`,
    },
  },
};

/** A version label, new or imported: the shared rule for path names (as adapter names; `versionLabelProblem` in model.ts). */
const NEW_LABEL: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: TREE_LIMITS.versionLabel,
  pattern: PATH_NAME_PATTERN_SOURCE,
  description: '1 to 128 letters, digits, spaces, "-", "_" or ".", no space at either end; unique in the tree',
};

export const variablesSchema: JsonSchema = {
  type: 'object',
  maxProperties: CONFIG_LIMITS.variables,
  propertyNames: { pattern: VARIABLE_NAME_PATTERN_SOURCE },
  additionalProperties: { type: 'string', maxLength: CONFIG_LIMITS.variableValue },
  description: 'Replaces `{{name}}` in rule values; names are 1 to 64 letters, digits, "_", "." or "-"',
};

/** A `range` bound: a number, or a string that is (or, with its `{{variables}}`, becomes) a decimal number. */
const RANGE_BOUND: JsonSchema = {
  anyOf: [{ type: 'number' }, { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.rulePredicateText }],
  description: 'Inclusive: a number, a decimal string or a {{variable}}',
};

export const ruleSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'path', 'mode', 'severity'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: RULE_ID_PATTERN_SOURCE, description: 'Unique along any root-to-node path' },
    path: { type: 'string', maxLength: CONFIG_LIMITS.rulePath, description: 'JSON Pointer (RFC 6901) into the device configuration' },
    mode: { type: 'string', enum: [...RULE_MODES] },
    severity: { type: 'string', enum: [...SEVERITIES] },
    value: { description: `Any JSON value, at most ${CONFIG_LIMITS.ruleValueBytes} bytes as JSON; {{name}} in strings names a variable` },
    ordered: { type: 'boolean', description: 'exact rules only: compare arrays element by element' },
    description: { type: 'string', maxLength: CONFIG_LIMITS.ruleDescription },
    match: {
      type: 'string',
      enum: [...RULE_MATCHES],
      description:
        "Over the matches of a path with `*` segments or of a predicate (an array's elements): `all` (default) must hold and at least one must exist, `any` one must hold, `none` may hold",
    },
    allowEmpty: { type: 'boolean', description: "A path or predicate with no match at all passes for `all` and `any` (NSO's allow-empty)" },
    pattern: {
      type: 'string',
      minLength: 1,
      maxLength: CONFIG_LIMITS.rulePattern,
      description:
        "An RE2 regular expression found anywhere in the value's text (`^…$` anchors it, `(?i)` ignores case); `{{name}}` inside matches the variable's text literally",
    },
    oneOf: {
      type: 'array',
      minItems: 1,
      maxItems: CONFIG_LIMITS.ruleOneOf,
      description: `The value deep-equals one of these (at most ${CONFIG_LIMITS.ruleOneOf} values, ${CONFIG_LIMITS.ruleValueBytes} bytes as JSON; {{name}} in strings names a variable)`,
    },
    cidr: {
      type: 'array',
      minItems: 1,
      maxItems: CONFIG_LIMITS.ruleCidr,
      items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.rulePredicateText },
      description: 'IPv4/IPv6 prefixes (`10.0.0.0/8`, `2001:db8::/32`, or an address); the value (an address or `address/length`) lies inside one of them',
    },
    range: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: {
        min: RANGE_BOUND,
        max: RANGE_BOUND,
      },
      description: "Inclusive bounds; the value is a number or a decimal string (YANG's 64-bit integers)",
    },
    strict: { type: 'boolean', description: "required rules with an array value: the list has no elements besides the expected ones (NSO's strict)" },
  },
};

const devicesSchema: JsonSchema = {
  type: 'array',
  maxItems: CONFIG_LIMITS.devicesPerNode,
  items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.deviceName, pattern: DEVICE_NAME_PATTERN_SOURCE },
  description: 'NSO device names; a device is on at most one node of a version',
};

const rulesSchema: JsonSchema = { type: 'array', maxItems: CONFIG_LIMITS.rulesPerNode, items: ruleSchema };

const selectSchema: JsonSchema = {
  type: 'array',
  maxItems: SELECTOR_LIMITS.perNode,
  items: selectorSchema,
  description: 'Devices assigned besides those listed: every device NSO knows that one of these selectors selects, resolved when a batch starts',
};

/** A whole node tree, unrolled to the depth limit (so a deeper tree is refused at the edge). */
const nodeSchema = (levels: number): JsonSchema => ({
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    devices: devicesSchema,
    select: selectSchema,
    rules: rulesSchema,
    children: levels > 1 ? { type: 'array', maxItems: CONFIG_LIMITS.nodesPerVersion, items: nodeSchema(levels - 1) } : { type: 'array', maxItems: 0 },
  },
});

export const createVersionBody: JsonSchema = {
  type: 'object',
  required: ['name', 'base'],
  additionalProperties: false,
  properties: { name: NEW_LABEL, base: { type: 'string', minLength: 1, maxLength: 512, description: 'The version to copy' } },
};

export const updateVersionBody: JsonSchema = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: { name: NEW_LABEL, variables: variablesSchema },
};

export const putNodeBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { devices: devicesSchema, select: selectSchema, rules: rulesSchema },
  description: 'A field left out keeps its current value (empty for a new node); the node keeps its children',
};

const TEXT = { type: 'string' } as const;

export const importBody: JsonSchema = {
  type: 'object',
  required: ['name', 'deviceType', 'versions'],
  additionalProperties: false,
  properties: {
    format: { type: 'string', const: 'netconfig-tree/1' },
    id: { ...TEXT, description: 'Ignored: an import gets a new id' },
    name: { type: 'string', minLength: 1, maxLength: TREE_LIMITS.name, pattern: LABEL_PATTERN_SOURCE },
    deviceType: { type: 'string', minLength: 1, maxLength: TREE_LIMITS.deviceType, pattern: LABEL_PATTERN_SOURCE },
    description: { type: 'string', maxLength: TREE_LIMITS.description },
    created: { ...TEXT, description: 'Ignored' },
    lastUpdated: { ...TEXT, description: 'Ignored' },
    versions: {
      type: 'array',
      minItems: 1,
      maxItems: TREE_LIMITS.versions,
      items: {
        type: 'object',
        required: ['name', 'root'],
        additionalProperties: false,
        properties: {
          name: {
            ...NEW_LABEL,
            description: 'As a new label: 1 to 128 letters, digits, spaces, "-", "_" or "."; may repeat (the i-th version of a label is addressed `label~i`)',
          },
          variables: variablesSchema,
          root: nodeSchema(CONFIG_LIMITS.nodeDepth),
          created: { ...TEXT, description: 'Ignored' },
          createdBy: { ...TEXT, description: 'Ignored' },
          lastUpdated: { ...TEXT, description: 'Ignored' },
          lastUpdatedBy: { ...TEXT, description: 'Ignored' },
        },
      },
    },
  },
};

/** `POST /configuration_manager/compliance_reports`: a tree version, the adapter to fetch configurations through, and optionally which devices. */
export const startBatchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['treeId', 'version', 'adapterId'],
  properties: {
    treeId: TREE_ID_SCHEMA,
    version: { type: 'string', minLength: 1, maxLength: 256, description: 'The version label (`label~2` for the second of a repeated label)' },
    adapterId: { type: 'string', pattern: '^[A-Za-z0-9 ._-]{1,128}$', description: 'The adapter name' },
    devices: {
      type: 'array',
      minItems: 1,
      maxItems: 50_000,
      // Names what a version holds, also a device stored before today's name rule.
      items: { type: 'string', minLength: 1, maxLength: CONFIG_LIMITS.deviceName },
      description:
        'Only these devices (each must be assigned to a node of the version, listed on it or selected by its selectors); default every device of the version',
    },
    sync: {
      type: 'string',
      enum: ['check', 'sync-from', 'none'],
      default: 'check',
      description:
        "What NSO is asked before each device is graded: `check` (default) whether its copy matches the device (check-sync, or compare-config where the NED cannot check-sync), and an out-of-sync device is graded `out-of-sync` with NSO's diff; `sync-from` to take the device's configuration first; `none` nothing (NSO's copy is graded as it is)",
    },
  },
};
