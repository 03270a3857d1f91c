/** The routes of a tree's exemptions, and of the tree's changelog that records them. */
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { CHANGELOG_PAGE } from '../runtime/changelog.js';
import { treeParams } from '../trees/schemas.js';
import { EXEMPTION_LIMITS } from './model.js';
import { exemptionBody, exemptionParams } from './schemas.js';
import { EXEMPTION_PAGE } from './service.js';

const COLLECTION = '/configuration_manager/configs/{treeId}/exemptions';
const ONE = `${COLLECTION}/{exemptionId}`;
const SHOWN = '`{ exemptionId, treeId, ruleId, devices | selector, until, reason, createdAt, createdBy, updatedAt, updatedBy }`';
const READ_NEEDS = { tables: { compliance: 'read', trees: 'read' } } as const;
const WRITE_NEEDS = { tables: { compliance: 'write', trees: 'read', changelog: 'append' } } as const;
const WRITE_400 =
  'The request is invalid: each offending field named (both or neither of `devices` and `selector`, a device name, a `namePattern` RE2 does not compile, `until` not a real date-time with offset, past, or more than five years ahead)';
const ONE_400 = 'treeId or exemptionId is not 24 lowercase hexadecimal characters, or a body was sent';
const CHANGED = 'The exemption changed meanwhile (`changed`): read it again';

export const exemptionRoutes: readonly LiveRoute[] = [
  {
    method: 'POST',
    path: COLLECTION,
    operationId: 'createExemption',
    summary: "Exempt devices from one of a tree's rules until a date: the rule is listed as exempted and left out of their score",
    tag: 'exemptions',
    handler: 'exemptions/handlers/create',
    roles: ['admin'],
    request: { pathParameters: treeParams, body: exemptionBody },
    responses: {
      201: `The exemption: ${SHOWN}; its path in \`Location\``,
      400: WRITE_400,
      404: 'No tree has this id',
      413: `The tree already holds ${EXEMPTION_LIMITS.perTree} exemptions (expired ones count until deleted)`,
      503: 'The compliance store is unavailable; retry later',
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'GET',
    path: COLLECTION,
    operationId: 'listExemptions',
    summary: "List a tree's exemptions, newest first (expired ones included until deleted)",
    tag: 'exemptions',
    handler: 'exemptions/handlers/list',
    roles: ['admin', 'apiread'],
    request: { pathParameters: treeParams, queryStringParameters: pageQuery(EXEMPTION_PAGE.max, EXEMPTION_PAGE.default), body: EMPTY_BODY },
    responses: {
      200: 'A page of exemptions, newest first: `{ items, next? }`; `next` is absent on the last page',
      400: 'treeId, limit or cursor is invalid (a cursor of another tree included), an unknown query parameter was sent, or a body was sent',
      404: 'No tree has this id',
      503: 'A store is unavailable; retry later',
    },
    needs: READ_NEEDS,
  },
  {
    method: 'GET',
    path: ONE,
    operationId: 'getExemption',
    summary: 'Get one exemption of a tree',
    tag: 'exemptions',
    handler: 'exemptions/handlers/get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: exemptionParams, body: EMPTY_BODY },
    responses: {
      200: `The exemption: ${SHOWN}`,
      400: ONE_400,
      404: 'No tree has this id, or it has no such exemption',
      503: 'A store is unavailable; retry later',
    },
    needs: READ_NEEDS,
  },
  {
    method: 'PUT',
    path: ONE,
    operationId: 'putExemption',
    summary: "Replace an exemption's rule, devices, date and reason (who made it is kept)",
    tag: 'exemptions',
    handler: 'exemptions/handlers/put',
    roles: ['admin'],
    request: { pathParameters: exemptionParams, body: exemptionBody },
    responses: {
      200: `The exemption: ${SHOWN}`,
      400: WRITE_400,
      404: 'No tree has this id, or it has no such exemption',
      409: CHANGED,
      503: 'The compliance store is unavailable; retry later',
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'DELETE',
    path: ONE,
    operationId: 'deleteExemption',
    summary: 'Delete an exemption: the rule counts again on its devices from the next batch',
    tag: 'exemptions',
    handler: 'exemptions/handlers/delete',
    roles: ['admin'],
    request: { pathParameters: exemptionParams, body: EMPTY_BODY },
    responses: {
      204: 'The exemption is deleted',
      400: ONE_400,
      404: 'No tree has this id, or it has no such exemption',
      409: CHANGED,
      503: 'The compliance store is unavailable; retry later',
    },
    needs: WRITE_NEEDS,
  },
  {
    method: 'GET',
    path: '/configuration_manager/configs/{treeId}/changelogs',
    operationId: 'listTreeChangelogs',
    summary: "A tree's audit trail, newest first: who created, replaced or deleted its exemptions, when, field by field",
    tag: 'exemptions',
    handler: 'exemptions/handlers/changelogs',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: treeParams,
      queryStringParameters: pageQuery(CHANGELOG_PAGE.max, CHANGELOG_PAGE.default, 'Entries per page'),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of entries, newest first: `{ items: [{ kind: "tree", name, at, by, action, changes: [{ field, from?, to? }] }], next? }`; a change\'s field is `<exemptionId>.<field>`, a device list shown as its count and SHA-256',
      400: 'treeId, limit or cursor is invalid (a cursor of another subject included), an unknown query parameter was sent, or a body was sent',
      404: 'No tree has this id and none ever had an entry under it',
      503: 'A store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read', changelog: 'read' } },
  },
];
