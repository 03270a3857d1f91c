/**
 * The schemas of success answers whose shape the handlers fix, by operation and status, for
 * openapi.json; and the component schemas they (and the health problems) share. Strict: a
 * member not listed here fails the end-to-end conformance test. An operation not listed (a
 * new route) has an open schema: its success body is described by its response description only.
 */
import type { JsonSchema } from '../../functions/platform/json-schema.js';
import { GRADES } from '../../functions/compliance/grading.js';
import { BATCH_ID_PATTERN, BATCH_KINDS, BATCH_STATUSES, REPORT_ID_PATTERN, SYNC_MODES, SYNC_RESULTS } from '../../functions/compliance/model.js';
import { RULE_MODES, SEVERITIES } from '../../functions/trees/config-model.js';
import { TREE_ID_PATTERN } from '../../functions/trees/model.js';
import { MAX_LISTED_FAILURES } from '../../functions/trees/rules.js';
import { CONFIG_ID_PATTERN } from '../../functions/configs/keys.js';
import { CONFIG_SOURCES } from '../../functions/configs/model.js';
import { importBody, ruleSchema, variablesSchema } from '../../functions/trees/schemas.js';
import { selectorSchema } from '../../functions/trees/selectors.js';
import { CHANGE_ACTIONS, SUBJECT_KINDS } from '../../functions/runtime/changelog.js';
import { REMEDIATION_ID_PATTERN } from '../../functions/remediation/model.js';
import { PLAN_BROKEN_REASONS, PLAN_ID_PATTERN } from '../../functions/plans/model.js';
import { planBody } from '../../functions/plans/schemas.js';
import { DELTA_CHANGES } from '../../functions/compliance/history-model.js';
import { LOG_LEVELS } from '../../functions/platform/logger.js';
import { ADAPTER_BODY } from '../../functions/adapters/schemas.js';
import { EXEMPTION_ID, exemptionBody } from '../../functions/exemptions/schemas.js';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const ISO_TIME = { type: 'string', format: 'date-time' } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;
const BATCH_ID = { type: 'string', pattern: BATCH_ID_PATTERN } as const;
const PLAN_ID = { type: 'string', pattern: PLAN_ID_PATTERN } as const;
const REPORT_ID = { type: 'string', pattern: REPORT_ID_PATTERN } as const;
const GRADE = { enum: [...GRADES] } as const;
/** A node's device selectors. */
const SELECT: JsonSchema = { type: 'array', items: selectorSchema, description: 'Devices selected besides those listed (resolved when a batch starts)' };
/** Devices by grade, every grade present. */
const GRADE_COUNTS: JsonSchema = {
  type: 'object',
  required: [...GRADES],
  additionalProperties: false,
  properties: Object.fromEntries(GRADES.map((g) => [g, COUNT])),
};
/** What starting a remediation run or its rollback answers. */
const STARTED_REMEDIATION: JsonSchema = {
  type: 'object',
  required: ['remediationId', 'status', 'devices'],
  additionalProperties: false,
  properties: { remediationId: { type: 'string', pattern: REMEDIATION_ID_PATTERN }, status: { const: 'running' }, devices: COUNT },
};
/** What starting a compliance batch (directly or by running a plan) answers. */
const STARTED_BATCH: JsonSchema = {
  type: 'object',
  required: ['batchId', 'status', 'total'],
  additionalProperties: false,
  properties: { batchId: BATCH_ID, status: { const: 'running' }, total: COUNT },
};
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
        description:
          'Why it is down: timeout, unreachable, tls, refused-address, unauthorized, unexpected-status, secrets-unavailable, secret-unusable, misconfigured or stopped',
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
    description: 'A compliance or backup batch: its status, progress, rule totals and device counts by grade.',
    type: 'object',
    required: ['batchId', 'kind', 'adapterId', 'status', 'total', 'done', 'totals', 'grades', 'sync', 'started'],
    additionalProperties: false,
    properties: {
      batchId: BATCH_ID,
      kind: { enum: [...BATCH_KINDS], description: 'A `compliance` batch has its tree version (`treeId`, `version`); a `backup` has none' },
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      version: { type: 'string' },
      planId: { ...PLAN_ID, description: 'The compliance plan the batch ran for, if any' },
      adapterId: { type: 'string' },
      status: { enum: [...BATCH_STATUSES] },
      total: COUNT,
      done: COUNT,
      totals: ref('RuleTotals'),
      grades: GRADE_COUNTS,
      sync: { enum: [...SYNC_MODES], description: 'What NSO was asked before each device was graded (`none` for a batch started before sync modes)' },
      started: ISO_TIME,
      finished: ISO_TIME,
      reason: { type: 'string', description: 'Why a failed batch failed' },
      selections: {
        type: 'array',
        description:
          "A compliance batch's node selectors as they were resolved when it started: per node with `select`, how many devices they chose (listed devices not counted)",
        items: {
          type: 'object',
          required: ['node', 'select', 'devices'],
          additionalProperties: false,
          properties: { node: { type: 'string' }, select: SELECT, devices: COUNT },
        },
      },
    },
  },
  Exemption: {
    description: "An exemption of some of a tree's devices from one rule until a date: the fields written, and who wrote them when.",
    type: 'object',
    required: [...(exemptionBody['required'] as string[]), 'exemptionId', 'treeId', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy'],
    additionalProperties: false,
    properties: {
      exemptionId: EXEMPTION_ID,
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      ...(exemptionBody['properties'] as Record<string, JsonSchema>),
      createdAt: ISO_TIME,
      createdBy: { type: 'string', description: 'The token subject of who created the exemption' },
      updatedAt: ISO_TIME,
      updatedBy: { type: 'string', description: 'The token subject of who last replaced it (its creator until then)' },
    },
  },
  CompliancePlan: {
    description: 'A compliance plan: the fields written, who wrote them when, its last run, its next scheduled run, and whether it is broken.',
    type: 'object',
    required: [...(planBody['required'] as string[]), 'planId', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy'],
    additionalProperties: false,
    properties: {
      planId: PLAN_ID,
      ...(planBody['properties'] as Record<string, JsonSchema>),
      createdAt: ISO_TIME,
      createdBy: { type: 'string', description: 'The token subject of who created the plan' },
      updatedAt: ISO_TIME,
      updatedBy: { type: 'string', description: 'The token subject of who wrote the plan last' },
      lastRun: {
        type: 'object',
        description: 'The last run, by a user or the schedule: started a batch (`batchId`) or skipped (`reason`)',
        required: ['at', 'trigger', 'outcome'],
        additionalProperties: false,
        properties: {
          at: ISO_TIME,
          trigger: { enum: ['user', 'schedule'] },
          outcome: { enum: ['started', 'skipped'] },
          batchId: BATCH_ID,
          reason: { type: 'string', description: 'Why the run was skipped' },
        },
      },
      lastBatch: {
        type: 'object',
        description: 'The last batch a run started (kept when later runs are skipped): while it runs, the plan is not run again',
        required: ['batchId', 'at'],
        additionalProperties: false,
        properties: { batchId: BATCH_ID, at: ISO_TIME },
      },
      nextRunAt: { ...ISO_TIME, description: 'When the schedule fires next (enabled plans with a schedule, once the schedule is written)' },
      broken: {
        type: 'object',
        description:
          "Present when the plan's tree, version or adapter is gone, or its version no longer assigns some of its devices: it is not run, by a user or the schedule",
        required: ['reason', 'detail'],
        additionalProperties: false,
        properties: { reason: { enum: [...PLAN_BROKEN_REASONS] }, detail: { type: 'string' } },
      },
      schedulePending: {
        const: true,
        description: 'The plan was saved but its schedule could not be written (the write answered 503): writing the plan again (`PUT`) writes it',
      },
    },
  },
  DeltaCounts: {
    description: 'Devices of a delta by class: newly failing, fixed, another grade change, new and gone.',
    type: 'object',
    required: [...DELTA_CHANGES],
    additionalProperties: false,
    properties: Object.fromEntries(DELTA_CHANGES.map((c) => [c, COUNT])),
  },
  DeltaRow: {
    description: "One device of a delta: how its grade moved from the plan's previous completed batch to this one.",
    type: 'object',
    required: ['device', 'change'],
    additionalProperties: false,
    properties: {
      device: { type: 'string' },
      change: { enum: [...DELTA_CHANGES] },
      from: { ...GRADE, description: 'The grade in the previous batch (absent for `new`)' },
      to: { ...GRADE, description: 'The grade in this batch (absent for `gone`)' },
      reportId: { ...REPORT_ID, description: "This batch's report of the device (absent for `gone`)" },
    },
  },
  TrendPoint: {
    description: 'One batch of a plan in its trend: its time, status, device counts by grade, rule totals and delta counts.',
    type: 'object',
    required: ['batchId', 'kind', 'status', 'started', 'total', 'grades', 'totals'],
    additionalProperties: false,
    properties: {
      batchId: BATCH_ID,
      kind: { enum: [...BATCH_KINDS] },
      status: { enum: [...BATCH_STATUSES] },
      started: ISO_TIME,
      finished: ISO_TIME,
      total: { ...COUNT, description: 'Devices in the batch' },
      grades: GRADE_COUNTS,
      totals: ref('RuleTotals'),
      delta: { ...ref('DeltaCounts'), description: "Completed batches: against the plan's previous completed batch" },
    },
  },
  DevicePoint: {
    description: "One batch's grade of a device in its history.",
    type: 'object',
    required: ['batchId', 'at', 'grade'],
    additionalProperties: false,
    properties: {
      batchId: BATCH_ID,
      at: { ...ISO_TIME, description: 'When the device was checked' },
      grade: GRADE,
      score: { type: 'number', minimum: 0, maximum: 100, description: 'Absent for grades error and out-of-sync' },
      failing: {
        type: 'array',
        items: { type: 'string' },
        description: 'Ids of the rules that failed (absent for `error` and `out-of-sync`: no rule was evaluated)',
      },
      reportId: REPORT_ID,
    },
  },
  DeviceRuleState: {
    description: "A rule's state on a device over the plan's completed batches.",
    type: 'object',
    required: ['ruleId', 'failing', 'lastChangedAt'],
    additionalProperties: false,
    properties: {
      ruleId: { type: 'string' },
      failing: { type: 'boolean' },
      firstFailedAt: { ...ISO_TIME, description: 'When the rule began failing in its current streak (failing rules only)' },
      lastChangedAt: { ...ISO_TIME, description: 'When the rule last went from passing to failing or back; when it was first seen, if never' },
    },
  },
  ComplianceReport: {
    description: 'One device’s compliance report.',
    type: 'object',
    required: ['reportId', 'batchId', 'device', 'grade', 'totals', 'issues', 'checkedAt'],
    additionalProperties: false,
    properties: {
      reportId: REPORT_ID,
      batchId: BATCH_ID,
      device: { type: 'string' },
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      version: { type: 'string' },
      node: {
        type: 'string',
        description: 'The node the device is assigned to, as a path from the root (absent in a backup’s report, as are `treeId` and `version`)',
      },
      grade: { enum: [...GRADES] },
      score: { type: 'number', minimum: 0, maximum: 100, description: 'Absent for grades error and out-of-sync' },
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
            matches: { ...COUNT, description: 'A rule over several places (a `*` path or a predicate): how many matches its path had' },
            failures: {
              type: 'array',
              maxItems: MAX_LISTED_FAILURES,
              description: `The failing matches by concrete JSON Pointer, at most ${MAX_LISTED_FAILURES} (the first is also \`at\`, \`expected\`, \`actual\`)`,
              items: {
                type: 'object',
                required: ['at', 'message'],
                additionalProperties: false,
                properties: {
                  at: { type: 'string', description: 'JSON Pointer of the failing match (or of the place below it that differs)' },
                  message: { type: 'string' },
                  expected: { description: 'What the rule wants there (a short excerpt)' },
                  actual: { description: 'A short excerpt of what the device has there' },
                  truncated: { type: 'array', items: { enum: ['expected', 'actual'] }, description: 'Which of `expected` and `actual` were cut' },
                },
              },
            },
            failuresOmitted: { ...COUNT, description: 'Failing matches left out of `failures`' },
          },
        },
      },
      issuesOmitted: { ...COUNT, description: 'Failed rules left out of `issues` to keep the report within the item size limit' },
      exempted: {
        type: 'array',
        description: 'Rules an exemption held for when the device was checked: evaluated, but left out of `issues`, `score` and `totals`',
        items: {
          type: 'object',
          required: ['ruleId', 'node', 'severity', 'outcome', 'exemption'],
          additionalProperties: false,
          properties: {
            ruleId: { type: 'string' },
            node: { type: 'string' },
            severity: { enum: [...SEVERITIES] },
            outcome: { enum: ['pass', 'fail', 'invalid'], description: 'What the rule gave' },
            exemption: {
              type: 'object',
              required: ['exemptionId', 'ruleId', 'until', 'reason', 'by'],
              additionalProperties: false,
              properties: {
                exemptionId: EXEMPTION_ID,
                ruleId: { type: 'string' },
                until: { type: 'string', description: 'The exemption held until then (as written, with its offset)' },
                reason: { type: 'string' },
                by: { type: 'string', description: 'Who made (or last changed) the exemption' },
              },
            },
          },
        },
      },
      exemptedOmitted: { ...COUNT, description: 'Exempted rules left out of `exempted` to keep the report within the item size limit' },
      reason: { type: 'string', description: 'Grade error only: why the configuration could not be checked' },
      sync: {
        type: 'object',
        description: "Whether NSO's copy was checked against the device before grading (the batch's `sync` mode), and what came of it",
        required: ['mode', 'result'],
        additionalProperties: false,
        properties: {
          mode: { enum: [...SYNC_MODES] },
          result: {
            enum: [...SYNC_RESULTS],
            description: '`not-checked` for mode `none`, an orchestrator without the actions (see `note`) or a failed action (see `reason`)',
          },
          note: { type: 'string' },
        },
      },
      diff: { type: 'string', description: "Grade out-of-sync only: NSO's diff of the device against its copy, secrets masked" },
      diffTruncated: { const: true, description: 'The diff was cut to keep the report within the item size limit' },
      configId: {
        type: 'string',
        pattern: CONFIG_ID_PATTERN,
        description: 'The configuration graded or kept, in the device’s history (absent when none was fetched, or none is kept)',
      },
      checkedAt: ISO_TIME,
    },
  },
  ConfigEntry: {
    description: 'One take of a device’s configuration.',
    type: 'object',
    required: ['configId', 'adapterId', 'device', 'takenAt', 'sha256', 'size', 'batchId', 'source'],
    additionalProperties: false,
    properties: {
      configId: { type: 'string', pattern: CONFIG_ID_PATTERN },
      adapterId: { type: 'string' },
      device: { type: 'string' },
      takenAt: ISO_TIME,
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the configuration’s canonical JSON (members sorted)' },
      size: { ...COUNT, description: 'Bytes of the canonical JSON' },
      batchId: { type: 'string' },
      source: { enum: [...CONFIG_SOURCES] },
      grade: { type: 'string', description: 'The grade the compliance batch gave it' },
    },
  },
  Node: {
    description: 'A node of a version with its whole subtree.',
    type: 'object',
    required: ['name', 'devices', 'rules', 'children'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      devices: { type: 'array', items: { type: 'string' } },
      select: SELECT,
      rules: { type: 'array', items: ruleSchema },
      children: { type: 'array', items: ref('Node') },
    },
  },
  Version: {
    description: 'One version of a tree with its whole node tree.',
    type: 'object',
    required: ['treeId', 'name', 'address', 'variables', 'root', 'created', 'createdBy', 'lastUpdated', 'lastUpdatedBy'],
    additionalProperties: false,
    properties: {
      treeId: { type: 'string', pattern: TREE_ID_PATTERN.source },
      name: { type: 'string' },
      address: { type: 'string', description: 'How the version is addressed in paths: its name, or `name~n` for the n-th of repeated labels' },
      variables: variablesSchema,
      root: ref('Node'),
      created: ISO_TIME,
      createdBy: { type: 'string' },
      lastUpdated: ISO_TIME,
      lastUpdatedBy: { type: 'string' },
    },
  },
  NodeView: {
    description: 'One node of a version; its children by name only.',
    type: 'object',
    required: ['path', 'name', 'devices', 'rules', 'children'],
    additionalProperties: false,
    properties: {
      path: { type: 'string', description: 'From the root, e.g. `base/wan`' },
      name: { type: 'string' },
      devices: { type: 'array', items: { type: 'string' } },
      select: SELECT,
      rules: { type: 'array', items: ruleSchema },
      children: { type: 'array', items: { type: 'string' } },
    },
  },
  Adapter: {
    description: 'A named connection to an orchestrator; its password is always a `$VAULT_` reference.',
    type: 'object',
    required: ['name', 'type', 'baseUrl', 'auth', 'created', 'lastUpdated'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      ...(ADAPTER_BODY['properties'] as Record<string, JsonSchema>),
      state: { enum: ['RUNNING', 'STOPPED'], description: 'Absent only on records older than the adapter lifecycle (they run)' },
      logLevel: { enum: [...LOG_LEVELS], description: 'How much the relay logs of calls through it; absent on records older than the setting (info)' },
      created: ISO_TIME,
      lastUpdated: ISO_TIME,
    },
  },
  ChangelogEntry: {
    description: 'One change of an adapter, application, plan or tree: who, when, what, field by field (secrets only as their `$VAULT_` reference).',
    type: 'object',
    required: ['kind', 'name', 'at', 'by', 'action', 'changes'],
    additionalProperties: false,
    properties: {
      kind: { enum: [...SUBJECT_KINDS] },
      name: { type: 'string' },
      at: ISO_TIME,
      by: { type: 'string', description: 'The caller’s token subject (`system` for a change the service made itself)' },
      action: { enum: [...CHANGE_ACTIONS] },
      changes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['field'],
          additionalProperties: false,
          properties: {
            field: { type: 'string', description: 'A dotted path, e.g. `auth.password`' },
            from: { description: 'Absent when the field is new' },
            to: { description: 'Absent when the field is gone' },
          },
        },
      },
    },
  },
  DamagedAdapter: {
    description: 'A stored adapter that cannot be used as it is (a damaged record, a `$ENC` password): listed, never with its values.',
    type: 'object',
    required: ['name', 'status', 'problem', 'detail'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      status: { const: 'damaged' },
      problem: { enum: ['secret-reference-invalid', 'damaged-record'] },
      detail: { type: 'string' },
    },
  },
};

/** A page of a list: `{ items, next? }`. */
const page = (items: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', items }, next: NEXT },
});

const adapterWithProbe: JsonSchema = {
  ...(responseComponents['Adapter'] as Record<string, unknown>),
  description: 'The adapter and the probe of its orchestrator',
  required: [...(responseComponents['Adapter']!['required'] as string[]), 'probe'],
  properties: {
    ...(responseComponents['Adapter']!['properties'] as Record<string, JsonSchema>),
    probe: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: (({ name: _n, type: _t, state: _s, checkedAt: _c, ...rest }) => rest)(
        responseComponents['AdapterProbe']!['properties'] as Record<string, JsonSchema>,
      ),
    },
  },
};

const serverHealth: JsonSchema = {
  type: 'object',
  required: ['status', 'runtime', 'region', 'function', 'memory', 'container'],
  additionalProperties: false,
  properties: {
    status: { const: 'up' },
    runtime: {
      type: 'object',
      required: ['name', 'version', 'architecture'],
      additionalProperties: false,
      properties: { name: { const: 'nodejs' }, version: { type: 'string' }, architecture: { type: 'string' }, executionEnv: { type: 'string' } },
    },
    region: { type: ['string', 'null'] },
    function: {
      type: 'object',
      required: ['name', 'version'],
      additionalProperties: false,
      properties: { name: { type: 'string' }, version: { type: 'string' } },
    },
    memory: {
      type: 'object',
      required: ['configuredMb', 'rssMb', 'heapUsedMb', 'heapTotalMb', 'externalMb'],
      additionalProperties: false,
      properties: {
        configuredMb: { type: ['integer', 'null'] },
        ...Object.fromEntries(['rssMb', 'heapUsedMb', 'heapTotalMb', 'externalMb'].map((k) => [k, { type: 'number', minimum: 0 }])),
      },
    },
    container: {
      type: 'object',
      required: ['start', 'invocation', 'startedAt', 'uptimeSeconds'],
      additionalProperties: false,
      properties: {
        start: { enum: ['cold', 'warm'] },
        invocation: { type: 'integer', minimum: 1 },
        initializationType: { type: 'string' },
        startedAt: ISO_TIME,
        uptimeSeconds: { type: 'number', minimum: 0 },
      },
    },
  },
};

export const responseSchemas: Readonly<Record<string, Readonly<Record<number, JsonSchema>>>> = {
  getConsoleConfig: {
    200: {
      type: 'object',
      required: ['authorizationEndpoint', 'tokenEndpoint', 'clientId', 'scopes', 'rolesClaim'],
      additionalProperties: false,
      properties: {
        authorizationEndpoint: { type: 'string', format: 'uri', description: 'Where the browser signs in (authorization code with PKCE S256)' },
        tokenEndpoint: { type: 'string', format: 'uri', description: 'Where codes and refresh tokens are exchanged for tokens' },
        clientId: { type: 'string', minLength: 1, description: 'The console’s client id: the `aud` of its ID tokens' },
        scopes: { type: 'array', items: { type: 'string' }, minItems: 1 },
        rolesClaim: { type: 'string', minLength: 1, description: 'The ID token claim listing the caller’s roles' },
        endSessionEndpoint: { type: 'string', format: 'uri', description: 'Where signing out ends the provider’s session' },
      },
    },
  },
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
  listTrees: { 200: page(ref('TreeSummary')) },
  createVersion: { 201: ref('Version') },
  getVersion: { 200: ref('Version') },
  updateVersion: { 200: ref('Version') },
  putNode: { 200: ref('NodeView'), 201: ref('NodeView') },
  getNode: { 200: ref('NodeView') },
  // The export is what the import takes (its `format` always set).
  exportTree: { 200: { ...importBody, required: ['format', 'id', ...(importBody['required'] as string[]), 'created', 'lastUpdated'] } },
  putAdapter: { 200: ref('Adapter'), 201: ref('Adapter') },
  createAdapter: { 201: ref('Adapter') },
  getAdapter: { 200: ref('Adapter') },
  stopAdapter: { 200: ref('Adapter') },
  startAdapter: { 200: ref('Adapter') },
  restartAdapter: { 200: adapterWithProbe },
  listAdapters: {
    200: page({ anyOf: [ref('Adapter'), ref('DamagedAdapter')] }),
  },
  setAdapterLogLevel: { 200: ref('Adapter') },
  listAdapterChangelogs: { 200: page(ref('ChangelogEntry')) },
  listApplicationChangelogs: { 200: page(ref('ChangelogEntry')) },
  listApplicationChangelogsSingular: { 200: page(ref('ChangelogEntry')) },
  getAdapterSchema: {
    200: {
      type: 'object',
      required: ['type', 'schema'],
      additionalProperties: false,
      properties: { type: { enum: ['nso'] }, schema: { type: 'object', description: 'The JSON Schema (2020-12) PUT /adapters/{name} validates against' } },
    },
  },
  getServerHealth: { 200: serverHealth },
  getAdaptersHealth: {
    200: {
      type: 'object',
      required: ['status', 'health', 'checkedAt', 'adapters'],
      additionalProperties: false,
      properties: {
        status: { enum: ['up', 'down', 'degraded'] },
        health: { enum: ['up', 'down', 'degraded'] },
        checkedAt: ISO_TIME,
        adapters: { type: 'array', items: ref('AdapterProbe') },
        next: NEXT,
      },
    },
  },
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
  startComplianceBatch: { 202: STARTED_BATCH },
  startBackupBatch: {
    202: {
      type: 'object',
      required: ['batchId', 'status', 'total'],
      additionalProperties: false,
      properties: {
        batchId: BATCH_ID,
        status: { const: 'running' },
        total: COUNT,
        skipped: {
          type: 'object',
          description:
            'Devices NSO knows whose names cannot be kept (longer than 253 characters, a `/`, a control character): how many, why, and up to three of them',
          required: ['count', 'reason', 'examples'],
          additionalProperties: false,
          properties: { count: COUNT, reason: { type: 'string' }, examples: { type: 'array', maxItems: 3, items: { type: 'string' } } },
        },
      },
    },
  },
  getComplianceBatch: { 200: ref('ComplianceBatch') },
  listComplianceBatches: { 200: page(ref('ComplianceBatch')) },
  getComplianceBatchDelta: {
    200: {
      type: 'object',
      required: ['batchId', 'planId', 'counts', 'items'],
      additionalProperties: false,
      properties: {
        batchId: BATCH_ID,
        planId: PLAN_ID,
        previousBatchId: { ...BATCH_ID, description: "The plan's completed batch before this one; absent when this is the plan's first" },
        counts: ref('DeltaCounts'),
        goneUnknown: { const: true, description: 'The previous batch had expired when this one was compared: `gone` devices are not known' },
        items: { type: 'array', items: ref('DeltaRow') },
        next: NEXT,
      },
    },
  },
  createExemption: { 201: ref('Exemption') },
  listExemptions: { 200: page(ref('Exemption')) },
  getExemption: { 200: ref('Exemption') },
  putExemption: { 200: ref('Exemption') },
  listTreeChangelogs: { 200: page(ref('ChangelogEntry')) },
  createCompliancePlan: { 201: ref('CompliancePlan') },
  listCompliancePlans: { 200: page(ref('CompliancePlan')) },
  getCompliancePlan: { 200: ref('CompliancePlan') },
  putCompliancePlan: { 200: ref('CompliancePlan') },
  runCompliancePlan: { 202: STARTED_BATCH },
  getCompliancePlanTrend: {
    200: {
      type: 'object',
      required: ['planId', 'items'],
      additionalProperties: false,
      properties: { planId: PLAN_ID, items: { type: 'array', items: ref('TrendPoint'), description: 'Oldest first' }, next: NEXT },
    },
  },
  getCompliancePlanDevice: {
    200: {
      type: 'object',
      required: ['planId', 'device', 'points', 'rules'],
      additionalProperties: false,
      properties: {
        planId: PLAN_ID,
        device: { type: 'string' },
        points: { type: 'array', items: ref('DevicePoint'), description: 'Newest first' },
        rules: { type: 'array', items: ref('DeviceRuleState'), description: 'Failing rules first, then by rule id' },
        next: NEXT,
      },
    },
  },
  startRemediation: { 202: STARTED_REMEDIATION },
  startRemediationRollback: { 202: STARTED_REMEDIATION },
  getComplianceReport: { 200: ref('ComplianceReport') },
  listComplianceReports: {
    200: page(ref('ComplianceReport')),
  },
  listConfigDevices: {
    200: page({
      type: 'object',
      required: ['device', 'configId', 'takenAt'],
      additionalProperties: false,
      properties: { device: { type: 'string' }, configId: { type: 'string', pattern: CONFIG_ID_PATTERN }, takenAt: ISO_TIME, grade: { type: 'string' } },
    }),
  },
  listDeviceConfigs: { 200: page(ref('ConfigEntry')) },
  getDeviceConfig: {
    200: {
      type: 'object',
      required: [...((responseComponents['ConfigEntry']!['required'] as string[]) ?? []), 'config'],
      additionalProperties: false,
      properties: {
        ...(responseComponents['ConfigEntry']!['properties'] as Record<string, JsonSchema>),
        config: { type: 'object', description: 'The configuration (`tailf-ncs:config`) as NSO gave it, secret members `[redacted]`' },
      },
    },
  },
};

const LOCATION = {
  Location: { required: true, description: 'The path of what was created, under the stage (`/v1/…`)', schema: { type: 'string', pattern: '^/' } },
};

/** Headers a success answer always carries, by operation and status. */
/** RFC 6902 operations, as the diff route answers them (values of secret members masked). */
const JSON_PATCH: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['op', 'path'],
    properties: {
      op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
      path: { type: 'string', description: 'JSON Pointer (RFC 6901) into the configuration' },
      from: { type: 'string' },
      value: {},
    },
  },
};

/**
 * Success answers that are not `application/json`: their media types and schemas, by operation
 * and status (every other success answer is `application/json` with its schema above).
 */
export const responseMedia: Readonly<Record<string, Readonly<Record<number, Readonly<Record<string, JsonSchema>>>>>> = {
  getConsole: {
    200: { 'text/html': { type: 'string', description: 'The console’s page: no inline script or style, its assets under the request’s base path' } },
  },
  getConsoleAsset: {
    200: {
      'text/javascript': { type: 'string', description: 'A minified ES module of the console' },
      'text/css': { type: 'string', description: 'A style sheet of the console' },
    },
  },
  diffDeviceConfigs: {
    200: {
      'application/json-patch+json': JSON_PATCH,
      'text/x-diff': { type: 'string', description: 'A unified diff (`format=unified`) of the two configurations, pretty-printed' },
    },
  },
};

export const responseHeaders: Readonly<Record<string, Readonly<Record<number, Readonly<Record<string, JsonSchema>>>>>> = {
  createTree: { 201: LOCATION },
  createVersion: { 201: LOCATION },
  importTree: { 201: LOCATION },
  createAdapter: { 201: LOCATION },
  startComplianceBatch: { 202: LOCATION },
  createExemption: { 201: LOCATION },
  createCompliancePlan: { 201: LOCATION },
  runCompliancePlan: { 202: LOCATION },
  startBackupBatch: { 202: LOCATION },
  startRemediation: { 202: LOCATION },
  startRemediationRollback: { 202: LOCATION },
};
