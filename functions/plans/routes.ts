/** The routes of compliance plans: saved batches that run on demand or on a schedule. */
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { PLAN_ID, planBody } from './schemas.js';
import { PLAN_PAGE } from './service.js';

const COLLECTION = '/configuration_manager/compliance_plans';
const ONE = `${COLLECTION}/{planId}`;
const PLAN_PATH = { type: 'object', required: ['planId'], properties: { planId: PLAN_ID } } as const;
const SHOWN =
  '`{ planId, name, treeId, version, adapterId, devices?, sync?, schedule?, timezone?, enabled, createdAt, createdBy, updatedAt, updatedBy, lastRun?, nextRunAt?, broken?, schedulePending? }`';
const READ_NEEDS = { tables: { compliance: 'read', trees: 'read', adapters: 'read' } } as const;
const WRITE_NEEDS = { tables: { compliance: 'write', trees: 'read', adapters: 'read', changelog: 'append' }, schedules: true } as const;
const WRITE_400 =
  'The request is invalid (`name` breaks the rule of names; `schedule` or `timezone` named when the Scheduler would refuse it or did), or names devices not assigned to a node of the version';
const SCHEDULE_503 = 'A store is unavailable, or the plan was saved but its schedule could not be written (the plan shows `schedulePending`; write it again)';

export const planRoutes: readonly LiveRoute[] = [
  {
    method: 'POST',
    path: COLLECTION,
    operationId: 'createCompliancePlan',
    summary: 'Save a compliance batch as a plan, run on demand or on an EventBridge Scheduler schedule',
    tag: 'compliance',
    handler: 'plans/handlers/create',
    roles: ['admin'],
    request: { body: planBody },
    responses: {
      201: `The plan: ${SHOWN}; its path in \`Location\``,
      400: WRITE_400,
      404: 'No tree has this id, it has no such version, or no adapter has this name',
      409: 'Another plan has this name (`name-taken`)',
      413: 'The plan names more device bytes than a plan keeps',
      503: SCHEDULE_503,
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'GET',
    path: COLLECTION,
    operationId: 'listCompliancePlans',
    summary: 'List compliance plans, with whether each is broken and when it runs next',
    tag: 'compliance',
    handler: 'plans/handlers/list',
    roles: ['admin', 'apiread'],
    request: { queryStringParameters: pageQuery(PLAN_PAGE.max, PLAN_PAGE.default), body: EMPTY_BODY },
    responses: {
      200: 'A page of plans by id: `{ items, next? }`; `next` is absent on the last page',
      400: 'limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
      503: 'A store is unavailable; retry later',
    },
    needs: READ_NEEDS,
  },
  {
    method: 'GET',
    path: ONE,
    operationId: 'getCompliancePlan',
    summary: 'Get a compliance plan: its fields, last run, next run, and whether it is broken',
    tag: 'compliance',
    handler: 'plans/handlers/get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: PLAN_PATH, body: EMPTY_BODY },
    responses: {
      200: `The plan: ${SHOWN}`,
      400: 'planId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No plan has this id',
      503: 'A store is unavailable; retry later',
    },
    needs: READ_NEEDS,
  },
  {
    method: 'PUT',
    path: ONE,
    operationId: 'putCompliancePlan',
    summary: "Replace a compliance plan's fields and its schedule (its runs and history are kept)",
    tag: 'compliance',
    handler: 'plans/handlers/put',
    roles: ['admin'],
    request: { pathParameters: PLAN_PATH, body: planBody },
    responses: {
      200: `The plan: ${SHOWN}`,
      400: WRITE_400,
      404: 'No plan has this id, no tree has this id, it has no such version, or no adapter has this name',
      409: 'Another plan has this name (`name-taken`), or the plan changed meanwhile (`changed`)',
      413: 'The plan names more device bytes than a plan keeps',
      503: SCHEDULE_503,
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'DELETE',
    path: ONE,
    operationId: 'deleteCompliancePlan',
    summary: 'Delete a compliance plan and its schedule (its batches, trend and device history stay until they expire)',
    tag: 'compliance',
    handler: 'plans/handlers/delete',
    roles: ['admin'],
    request: { pathParameters: PLAN_PATH, body: EMPTY_BODY },
    responses: {
      204: 'The plan and its schedule are deleted',
      400: 'planId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No plan has this id',
      409: 'The plan changed meanwhile (`changed`)',
      503: 'A store is unavailable, or the schedule could not be removed (nothing was deleted); retry later',
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'POST',
    path: `${ONE}/run`,
    operationId: 'runCompliancePlan',
    summary: 'Run a compliance plan now: starts a compliance batch of the plan',
    tag: 'compliance',
    handler: 'plans/handlers/run',
    roles: ['admin'],
    request: { pathParameters: PLAN_PATH, body: EMPTY_BODY },
    responses: {
      202: 'The batch started: `{ batchId, status: "running", total }`; its path in `Location`',
      400: 'planId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No plan has this id',
      409: 'The plan is broken (`plan-broken`: what it names is gone, or devices its version no longer assigns), its last batch still runs or is being started (`plan-running`), its adapter is stopped (`adapter-stopped`), or a device is chosen by two nodes of its version (`device-on-two-nodes`)',
      502: "The NSO's inventory (read when a node or an exemption selects devices) could not be read (nothing was started)",
      503: 'A store or the compliance engine is unavailable; retry later (nothing was started)',
      504: 'The NSO did not answer a page of its inventory in time (nothing was started)',
    },
    needs: {
      tables: { compliance: 'write', trees: 'read', adapters: 'read', changelog: 'append' },
      secrets: 'read',
      orchestrator: true,
      startsCompliance: true,
    },
    timeoutSeconds: 28,
  },
];
