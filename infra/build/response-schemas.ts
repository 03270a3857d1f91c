/**
 * The schemas of success answers whose shape the handlers fix, by operation and status, for
 * openapi.json; and the component schemas they (and the health problems) share. Strict: a
 * member not listed here fails the end-to-end conformance test. An operation not listed has
 * its success body described in prose only (its response description).
 */
import type { JsonSchema } from '../../functions/shared/json-schema.js';
import { GRADES } from '../../functions/compliance/grading.js';
import { BATCH_STATUSES } from '../../functions/compliance/model.js';
import { RULE_MODES, SEVERITIES } from '../../functions/trees/config.js';
import { TREE_ID_PATTERN } from '../../functions/trees/model.js';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const ISO_TIME = { type: 'string', format: 'date-time' } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;
const BATCH_ID = { type: 'string', pattern: '^[0-9a-f]{24}$' } as const;
const NEXT = { type: 'string', description: 'Continuation token for the next page (`cursor`); absent on the last page' } as const;

export const responseComponents: Record<string, JsonSchema> = {
  TreeSummary: {
    description: 'A golden-configuration tree: the fields of spec 2.3 plus the optional description.',
    type: 'object',
    required: ['id', 'name', 'deviceType', 'versions', 'created', 'lastUpdated'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: TREE_ID_PATTERN.source },
      name: { type: 'string' },
      deviceType: { type: 'string' },
      versions: { type: 'array', items: { type: 'string' }, description: 'Version labels in stored order; labels may repeat' },
      created: ISO_TIME,
      lastUpdated: ISO_TIME,
      description: { type: 'string' },
    },
  },
  DependencyCheck: {
    description: 'One dependency of `GET /health/system`; further members (`backend`, `table`) say which one.',
    type: 'object',
    required: ['status', 'latencyMs'],
    additionalProperties: { type: 'string' },
    properties: {
      status: { enum: ['up', 'down'] },
      latencyMs: { type: 'integer', minimum: 0 },
      reason: { enum: ['timeout', 'error'] },
    },
  },
  AdapterProbe: {
    description: 'One adapter’s probe: whether its orchestrator answers as it should.',
    type: 'object',
    required: ['name', 'type', 'status'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      type: { enum: ['nso'] },
      status: { enum: ['up', 'down'] },
      state: { enum: ['RUNNING', 'STOPPED'] },
      checkedAt: ISO_TIME,
      latencyMs: { type: 'integer', minimum: 0 },
      httpStatus: { type: 'integer' },
      reason: {
        type: 'string',
        description: 'Why it is down: timeout, unreachable, tls, refused-address, unauthorized, unexpected-status, secrets-unavailable, secret-unusable, misconfigured or stopped',
      },
    },
  },
  RuleTotals: {
    description: 'Rules evaluated, by outcome: failed ones by severity, and passed ones.',
    type: 'object',
    required: ['errors', 'warnings', 'infos', 'passes'],
    additionalProperties: false,
    properties: Object.fromEntries(['errors', 'warnings', 'infos', 'passes'].map((k) => [k, COUNT])),
  },
  ComplianceBatch: {
    description: 'A compliance batch: its status, progress, rule totals and device counts by grade.',
    type: 'object',
    required: ['batchId', 'treeId', 'version', 'adapterId', 'status', 'total', 'done', 'totals', 'grades', 'started'],
    additionalProperties: false,
    properties: {
      batchId: BATCH_ID,
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      version: { type: 'string' },
      adapterId: { type: 'string' },
      status: { enum: [...BATCH_STATUSES] },
      total: COUNT,
      done: COUNT,
      totals: ref('RuleTotals'),
      grades: { type: 'object', required: [...GRADES], additionalProperties: false, properties: Object.fromEntries(GRADES.map((g) => [g, COUNT])) },
      started: ISO_TIME,
      finished: ISO_TIME,
      reason: { type: 'string', description: 'Why a failed batch failed' },
    },
  },
  ComplianceReport: {
    description: 'One device’s compliance report.',
    type: 'object',
    required: ['reportId', 'batchId', 'device', 'treeId', 'version', 'node', 'grade', 'totals', 'issues', 'checkedAt'],
    additionalProperties: false,
    properties: {
      reportId: { type: 'string', pattern: '^[0-9a-f]{24}-[0-9a-f]{32}$' },
      batchId: BATCH_ID,
      device: { type: 'string' },
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      version: { type: 'string' },
      node: { type: 'string', description: 'The node the device is assigned to, as a path from the root' },
      grade: { enum: [...GRADES] },
      score: { type: 'number', minimum: 0, maximum: 100, description: 'Absent for grade error' },
      totals: ref('RuleTotals'),
      issues: {
        type: 'array',
        items: {
          type: 'object',
          required: ['ruleId', 'node', 'path', 'severity', 'mode', 'message'],
          additionalProperties: false,
          properties: {
            ruleId: { type: 'string' },
            node: { type: 'string' },
            path: { type: 'string' },
            severity: { enum: [...SEVERITIES] },
            mode: { enum: [...RULE_MODES] },
            message: { type: 'string' },
            at: { type: 'string', description: 'JSON Pointer of where the check failed' },
            expected: { description: 'What the rule wants there' },
            actual: { description: 'An excerpt of what the device has there' },
            truncated: { type: 'array', items: { type: 'string' }, description: 'Pointers of values cut in `actual`' },
          },
        },
      },
      issuesOmitted: { ...COUNT, description: 'Failed rules left out of `issues` to keep the report within the item size limit' },
      reason: { type: 'string', description: 'Grade error only: why the configuration could not be checked' },
      checkedAt: ISO_TIME,
    },
  },
};

const treePage: JsonSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', items: ref('TreeSummary') }, next: NEXT },
};

export const responseSchemas: Readonly<Record<string, Readonly<Record<number, JsonSchema>>>> = {
  getStatus: {
    200: {
      type: 'object',
      required: ['service', 'version', 'status'],
      additionalProperties: false,
      properties: { service: { type: 'string' }, version: { type: 'string' }, status: { const: 'running' } },
    },
  },
  relayRestAction: {
    200: {
      type: 'array',
      minItems: 1,
      maxItems: 1,
      items: {
        type: 'object',
        required: ['result'],
        additionalProperties: false,
        properties: {
          result: { type: 'string', pattern: '^[1-5][0-9]{2}$', description: 'The orchestrator’s HTTP status' },
          data: { description: 'The orchestrator’s body (JSON parsed, else text); absent when it sent none' },
        },
      },
    },
  },
  getTree: { 200: ref('TreeSummary') },
  createTree: { 201: ref('TreeSummary') },
  importTree: { 201: ref('TreeSummary') },
  listTrees: { 200: treePage },
  getSystemHealth: {
    200: {
      type: 'object',
      required: ['status', 'health', 'checkedAt', 'dependencies'],
      additionalProperties: false,
      properties: {
        status: { const: 'up' },
        health: { const: 'up' },
        checkedAt: ISO_TIME,
        dependencies: { type: 'object', additionalProperties: ref('DependencyCheck') },
      },
    },
  },
  getAdapterHealth: {
    200: {
      type: 'object',
      required: ['status', 'health', 'checkedAt', 'adapter'],
      additionalProperties: false,
      properties: { status: { const: 'up' }, health: { const: 'up' }, checkedAt: ISO_TIME, adapter: ref('AdapterProbe') },
    },
  },
  startComplianceBatch: {
    202: {
      type: 'object',
      required: ['batchId', 'status', 'total'],
      additionalProperties: false,
      properties: { batchId: BATCH_ID, status: { const: 'running' }, total: COUNT },
    },
  },
  getComplianceBatch: { 200: ref('ComplianceBatch') },
  getComplianceReport: { 200: ref('ComplianceReport') },
  listComplianceReports: {
    200: {
      type: 'object',
      required: ['items'],
      additionalProperties: false,
      properties: { items: { type: 'array', items: ref('ComplianceReport') }, next: NEXT },
    },
  },
};
