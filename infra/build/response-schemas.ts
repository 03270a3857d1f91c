/**
 * The schemas of success answers whose shape the handlers fix, by operation and status, for
 * openapi.json; and the component schemas they (and the health problems) share. Strict: a
 * member not listed here fails the end-to-end conformance test. An operation not listed has
 * its success body described in prose only (its response description).
 */
import type { JsonSchema } from '../../functions/shared/json-schema.js';
import { TREE_ID_PATTERN } from '../../functions/trees/model.js';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const ISO_TIME = { type: 'string', format: 'date-time' } as const;
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
      properties: { batchId: { type: 'string', pattern: '^[0-9a-f]{24}$' }, status: { const: 'running' }, total: { type: 'integer', minimum: 0 } },
    },
  },
};
