import { Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationOfLabel } from '../../bench/build.js';
import { firstCallEvent } from '../../bench/events.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { removedRouteName, removedRoutes } from '../../functions/api/removed.js';
import { LINK_SEGMENT, successorLinkTemplate } from '../../infra/removed-routes.js';
import { callsOutside } from '../../infra/config.js';
import { tableSpecs } from '../../functions/platform/tables.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { ROUTE_ROLES_VARIABLE } from '../../functions/platform/route-authorization.js';
import { apiPartOf, type NetconfigService } from '../../infra/stack.js';
import { specRows, type SpecRow } from '../support/spec-table.js';
import { methods, type Method, type Resources } from './api-template.js';
import { logicalIdOf, serviceTemplate, synthService } from './service-template.js';

/**
 * Synthesizes the service without bundling (bundling is exercised by `npm start` and the e2e
 * tests), read as one template: its stacks, the nested ones inlined (service-template.ts).
 */
const synth = () => {
  const { app, service } = synthService();
  addNagSuppressions(service);
  Aspects.of(app).add(new AwsSolutionsChecks());
  app.synth();
  return { stack: service, template: serviceTemplate(service) };
};

/** The spec's `:name` path as API Gateway serves it: `{name}`, no trailing slash. */
const gatewayPath = (row: SpecRow) => row.path.replaceAll(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
const specName = (row: SpecRow) => (row.method === 'ANY' ? row.path : `${row.method} ${row.path}`);

describe('stack', () => {
  let template: Template;
  let stack: NetconfigService;
  let all: Method[];
  const removed = specRows().filter((row) => !(row.replacement.length === 1 && row.replacement[0] === specName(row)));

  beforeAll(() => {
    ({ template, stack } = synth());
    all = methods(template);
  });

  it('answers 410 from a Mock integration for each of the 34 removed routes, with no authorizer', () => {
    expect(removed).toHaveLength(34);
    const mocks = all.filter((m) => m.props['Integration']?.Type === 'MOCK');
    expect(mocks).toHaveLength(34);
    for (const row of removed) {
      const m = all.find((x) => x.method === row.method && x.path === gatewayPath(row));
      expect(m, specName(row)).toBeDefined();
      expect(m!.props['AuthorizationType']).toBe('NONE');
      expect(m!.props['AuthorizerId']).toBeUndefined();
      const integration = m!.props['Integration'];
      expect(integration.Type).toBe('MOCK');
      expect(integration.PassthroughBehavior).toBe('NEVER');
      expect(integration.RequestTemplates['application/json']).toBe('{"statusCode": 410}');
      for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/yang-data+json']) {
        expect(integration.RequestTemplates[type], type).toBe('{"statusCode": 410}');
      }
      expect(integration.IntegrationResponses).toHaveLength(1);
      const response = integration.IntegrationResponses[0];
      expect(response.StatusCode).toBe('410');
      expect(response.SelectionPattern).toBeUndefined();
      // The Link lines (if any) come first and print nothing; the rest is the static problem.
      const template: string = response.ResponseTemplates['application/json'];
      const lines = template.split('\n');
      const json = lines.filter((l) => !l.startsWith('#')).join('\n');
      expect(JSON.parse(json)).toEqual({
        type: 'urn:netconfig:problem:route-removed',
        title: 'Gone',
        status: 410,
        detail: expect.stringContaining(`deprecated in ${row.deprecatedIn} and removed in ${row.removedIn}`),
        route: specName(row),
        deprecatedIn: row.deprecatedIn,
        removedIn: row.removedIn,
        replacement: row.replacement,
      });
      expect(response.ResponseParameters['method.response.header.Content-Type']).toBe("'application/problem+json'");
      // One link per replacement path whose parameters the removed route has, filled in order, under the prefix
      // the caller used (the request path less the route's own segments); a link that carries a path parameter is
      // added only when the value is a safe segment.
      const own = [...row.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const links = row.replacement.flatMap((r) => {
        let i = 0;
        const used: string[] = [];
        const p = r.replace(/^[A-Z]+ /, '').replace(/:\w+/g, () => (i < own.length ? (used.push(own[i]!), `$input.params('${own[i++]}')`) : ':'));
        if (p.includes(':')) return [];
        const add = `#set($link = "$link$sep<$base${p}>; rel=\${q}successor-version\${q}")#set($sep = ', ')`;
        const guard = used.map((name) => `$input.params('${name}').matches('${LINK_SEGMENT}')`).join(' && ');
        return [guard ? `#if(${guard})${add}#end` : add];
      });
      const directives = lines.filter((l) => l.startsWith('#'));
      if (links.length) {
        expect(directives).toEqual([
          `#set($q = '"')`,
          `#set($link = '')`,
          `#set($sep = '')`,
          `#set($base = $context.path.replaceAll('(?:/[^/]+){${row.path.split('/').filter(Boolean).length}}/?$', ''))`,
          ...links,
          `#if($link != '')#set($context.responseOverride.header.Link = "$link")#end`,
        ]);
        // Every parameter the header carries is tested in the same line, before it is used.
        for (const line of directives)
          for (const m of line.matchAll(/<[^>]*\$input\.params\('(\w+)'\)/g)) expect(line).toContain(`#if($input.params('${m[1]}').matches(`);
      } else expect(directives).toEqual([]);
      expect(template).toBe(
        `${successorLinkTemplate(removedRoutes.find((r) => r.method === row.method && removedRouteName(r) === specName(row))!) ?? ''}${json}`,
      );
      expect(response.ResponseParameters['method.response.header.Link']).toBeUndefined();
      expect(m!.props['MethodResponses']).toEqual([
        { StatusCode: '410', ResponseParameters: expect.objectContaining({ 'method.response.header.Content-Type': true }) },
      ]);
    }
  });

  it('says that POST /modules/load has no replacement', () => {
    const m = all.find((x) => x.method === 'POST' && x.path === '/modules/load')!;
    const body = JSON.parse(m.props['Integration'].IntegrationResponses[0].ResponseTemplates['application/json']);
    expect(body.replacement).toEqual([]);
    expect(body.detail).toMatch(/no replacement/);
  });

  it('serves GET /health/system and GET /health/server live, not as 410', () => {
    for (const path of ['/health/system', '/health/server']) {
      const m = all.filter((x) => x.path === path);
      expect(m).toHaveLength(1);
      expect(m[0]!.props['Integration'].Type).toBe('AWS_PROXY');
    }
  });

  it('puts the role authorizer on every live route but /status', () => {
    const authorizers = template.findResources('AWS::ApiGateway::Authorizer');
    expect(Object.values(authorizers)).toHaveLength(1);
    const [authorizerId] = Object.keys(authorizers);
    expect(Object.values(authorizers)[0]!.Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 300,
    });
    for (const route of liveRoutes) {
      const m = all.find((x) => x.method === route.method && x.path === route.path);
      expect(m, `${route.method} ${route.path}`).toBeDefined();
      expect(m!.props['Integration'].Type).toBe('AWS_PROXY');
      if (route.roles === 'public') {
        expect(m!.props['AuthorizationType']).toBe('NONE');
      } else {
        expect(m!.props['AuthorizationType']).toBe('CUSTOM');
        expect(m!.props['AuthorizerId']).toEqual({ Ref: authorizerId });
      }
    }
    expect(all).toHaveLength(liveRoutes.length + 34);
  });

  it('gives each route function the roles of its route, which it checks again (and none to the authorizer and the batch function)', () => {
    const resources = template.toJSON()['Resources'] as Resources;
    const variablesOf = (name: string) => resources[logicalIdOf(stack.functions[name]!.function)]!.Properties['Environment']['Variables'];
    for (const route of liveRoutes) {
      expect(variablesOf(route.operationId)[ROUTE_ROLES_VARIABLE], route.operationId).toBe(route.roles === 'public' ? 'public' : route.roles.join(','));
    }
    for (const name of ['authorizer', 'complianceBatch']) expect(variablesOf(name)).not.toHaveProperty(ROUTE_ROLES_VARIABLE);
  });

  it('keeps trees in an on-demand, encrypted, point-in-time-recoverable table retained on deletion', () => {
    const tables = template.findResources('AWS::DynamoDB::GlobalTable');
    expect(Object.keys(tables)).toHaveLength(Object.keys(tableSpecs).length);
    for (const table of Object.values(tables)) {
      expect(table['DeletionPolicy']).toBe('Retain');
      expect(table['UpdateReplacePolicy']).toBe('Retain');
      expect(table['Properties']).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        Replicas: [expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true })],
      });
    }
  });

  it('runs every function on Node.js 22, arm64, with a retained log group', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')).filter((f) => f['Properties']['Handler'] === 'index.handler');
    // One per route, the authorizer, the compliance batch function and its housekeeping, the remediation function, the plans' scheduled run.
    expect(functions).toHaveLength(liveRoutes.length + 5);
    for (const fn of functions) {
      expect(fn['Properties']).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
      expect(fn['Properties']['LoggingConfig']).toBeDefined();
    }
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: Match.anyValue() });
  });

  it('runs compliance batches on a durable function, started through its alias', () => {
    const batch = logicalIdOf(stack.functions['complianceBatch']!.function);
    const resources = template.toJSON().Resources as Resources;
    expect(resources[batch]!.Properties).toMatchObject({ Timeout: 900, DurableConfig: { ExecutionTimeout: 86_400, RetentionPeriodInDays: 14 } });
    template.hasResourceProperties('AWS::Lambda::Alias', { Name: 'live' });
  });

  it('runs remediation on a durable function, started through its alias by the start and rollback routes only', () => {
    const resources = template.toJSON().Resources as Resources;
    const run = logicalIdOf(stack.functions['remediationRun']!.function);
    expect(resources[run]!.Properties).toMatchObject({ Timeout: 900, DurableConfig: { ExecutionTimeout: 86_400, RetentionPeriodInDays: 14 } });
    expect(resources[run]!.Properties['Environment']['Variables']).toMatchObject({ COMPLIANCE_TABLE: expect.anything(), CHANGELOG_TABLE: expect.anything() });
    const alias = Object.entries(resources).find(
      ([, r]) => r.Type === 'AWS::Lambda::Alias' && r.Properties['Name'] === 'live' && JSON.stringify(r.Properties['FunctionName']).includes(run),
    );
    expect(alias).toBeDefined();
    const starters = liveRoutes.filter((r) => r.needs.startsRemediation).map((r) => r.operationId);
    expect(starters.sort()).toEqual(['startRemediation', 'startRemediationRollback']);
    for (const route of liveRoutes) {
      const variables = resources[logicalIdOf(stack.functions[route.operationId]!.function)]!.Properties['Environment']['Variables'];
      expect(JSON.stringify(variables['REMEDIATION_FUNCTION'] ?? null).includes(alias![0]), route.operationId).toBe(starters.includes(route.operationId));
    }
  });

  it('grants each function exactly the table access its route needs, on a role shared only by functions with the same needs', () => {
    const resources = template.toJSON().Resources as Resources;
    type Statement = { Action: string | string[]; Resource: unknown };
    const roleOf = (op: string) => logicalIdOf(stack.functions[op]!.function.role!);
    const statementsOf = (roleId: string): Statement[] =>
      Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties['Roles'].some((x: { Ref: string }) => x.Ref === roleId))
        .flatMap((p) => p.Properties['PolicyDocument']['Statement']);
    const tableLogicalId = (key: string) => logicalIdOf(stack.tables[key as keyof typeof stack.tables]);
    const actionsOn = (roleId: string, key: string) =>
      statementsOf(roleId)
        .filter((s) => JSON.stringify(s.Resource).includes(`"${tableLogicalId(key)}"`))
        .flatMap((s) => [s.Action].flat());
    // What the role allows on each table: write (items put and deleted), append (items put, never
    // updated, deleted or batch-written), read, or nothing.
    const tableAccess = (roleId: string) =>
      Object.fromEntries(
        Object.keys(tableSpecs).flatMap((key) => {
          const actions = actionsOn(roleId, key);
          if (actions.includes('dynamodb:PutItem') && actions.includes('dynamodb:DeleteItem')) return [[key, 'write']];
          if (actions.includes('dynamodb:PutItem')) {
            expect(
              actions.filter((a) => /Put|Update|Delete|Write|PartiQL/.test(a)),
              key,
            ).toEqual(['dynamodb:PutItem']);
            expect(actions, key).toContain('dynamodb:GetItem');
            return [[key, 'append']];
          }
          if (actions.includes('dynamodb:GetItem')) {
            expect(
              actions.filter((a) => /Put|Update|Delete|Write/.test(a)),
              key,
            ).toEqual([]);
            return [[key, 'read']];
          }
          expect(actions, key).toEqual([]);
          return [];
        }),
      );
    const invokesBatch = (roleId: string) => statementsOf(roleId).some((s) => [s.Action].flat().includes('lambda:InvokeFunction'));
    const fnId = (op: string) => logicalIdOf(stack.functions[op]!.function);
    for (const route of liveRoutes) {
      const role = roleOf(route.operationId);
      expect(tableAccess(role), route.operationId).toEqual(route.needs.tables ?? {});
      expect(invokesBatch(role), route.operationId).toBe(Boolean(route.needs.startsCompliance || route.needs.startsRemediation));
      // Created after its role's policy: never running before its grants exist.
      const policies = Object.entries(resources).filter(
        ([, r]) => r.Type === 'AWS::IAM::Policy' && r.Properties['Roles'].some((x: { Ref: string }) => x.Ref === role),
      );
      expect(policies.length, route.operationId).toBeGreaterThan(0);
      for (const [policyId] of policies) expect(resources[fnId(route.operationId)]!.DependsOn, route.operationId).toContain(policyId);
    }
    expect(tableAccess(roleOf('complianceBatch'))).toEqual({ compliance: 'write', adapters: 'read', configs: 'write', profiles: 'read' });
    expect(tableAccess(roleOf('remediationRun'))).toEqual({ compliance: 'write', adapters: 'read', changelog: 'append', profiles: 'read' });
    // The relay: adapters read only, idempotency keys written (claims and answers), trees nothing.
    const relay = roleOf('relayRestAction');
    expect(actionsOn(relay, 'adapters')).toContain('dynamodb:GetItem');
    expect(actionsOn(relay, 'adapters')).not.toContain('dynamodb:PutItem');
    expect(actionsOn(relay, 'idempotency')).toEqual(
      expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem']),
    );
    expect(actionsOn(relay, 'trees')).toEqual([]);
    // Shared exactly between routes of one part whose needs are the same (tables, secrets, starting batches, placement).
    const needsOf = (route: (typeof liveRoutes)[number]) =>
      JSON.stringify([
        Object.entries(route.needs.tables ?? {}).sort(),
        route.needs.secrets ?? null,
        Boolean(route.needs.startsCompliance),
        Boolean(route.needs.startsRemediation),
        route.needs.configsBucket ?? null,
        callsOutside(route),
      ]);
    const routesByRole = new Map<string, Set<string>>();
    for (const route of liveRoutes) routesByRole.set(roleOf(route.operationId), (routesByRole.get(roleOf(route.operationId)) ?? new Set()).add(needsOf(route)));
    for (const [role, needs] of routesByRole) expect([...needs], role).toHaveLength(1);
    // Roles are made per part (nested stack): one role per part and kind of needs.
    expect(routesByRole.size).toBe(new Set(liveRoutes.map((r) => `${apiPartOf(r)} ${needsOf(r)}`)).size);
    expect(routesByRole.size).toBeLessThan(liveRoutes.length);
  });

  it('gives functions that only resolve secrets the reader Vault credential, and only adapter writers the writer one', () => {
    const resources = template.toJSON().Resources as Resources;
    const secretIds = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret' && !r.Properties['Description']?.includes('Idempotency-Key'))
      .map(([id]) => id);
    expect(secretIds).toHaveLength(2);
    const reader = secretIds.find((id) => id.includes('Reader'))!;
    const writer = secretIds.find((id) => id.includes('Writer'))!;
    const envOf = (op: string) => {
      const logicalId = logicalIdOf(stack.functions[op]!.function);
      return resources[logicalId]!.Properties['Environment'].Variables;
    };
    const secretsOf = (op: string) => {
      const role = { Ref: logicalIdOf(stack.functions[op]!.function.role!) };
      return (
        Object.values(resources)
          .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties['Roles'].some((x: { Ref: string }) => x.Ref === role.Ref))
          .flatMap((p) => p.Properties['PolicyDocument']['Statement'])
          .filter((st: { Action: string | string[] }) => [st.Action].flat().includes('secretsmanager:GetSecretValue'))
          // cdk.json's minimizePolicies merges the statements of one action: a statement may name several secrets.
          .flatMap((st: { Resource: { Ref: string } | { Ref: string }[] }) => [st.Resource].flat().map((r) => r.Ref))
          .filter((id: string) => secretIds.includes(id))
      );
    };
    for (const op of ['relayRestAction', 'getSystemHealth', 'getAdapterHealth', 'complianceBatch']) {
      expect(envOf(op)).toMatchObject({ SECRETS_ACCESS: 'read', VAULT_CREDENTIALS_SECRET_ARN: { Ref: reader } });
      expect(secretsOf(op), op).toEqual([reader]);
    }
    for (const op of ['putAdapter', 'deleteAdapter']) {
      expect(envOf(op)).toMatchObject({ SECRETS_ACCESS: 'write', VAULT_CREDENTIALS_SECRET_ARN: { Ref: writer } });
      expect(secretsOf(op), op).toEqual([writer]);
    }
    expect(envOf('getTree')['VAULT_CREDENTIALS_SECRET_ARN']).toBeUndefined();
  });

  it('gives the fingerprint key only to the functions of routes that take Idempotency-Key, and keeps it', () => {
    const resources = template.toJSON().Resources as Resources;
    const keys = Object.entries(resources).filter(
      ([, r]) => r.Type === 'AWS::SecretsManager::Secret' && r.Properties['Description']?.includes('Idempotency-Key'),
    );
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0]!;
    expect(key['DeletionPolicy']).toBe('Retain');
    expect(key.Properties['GenerateSecretString']).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    const statementsOn = (op: string) => {
      const role = { Ref: logicalIdOf(stack.functions[op]!.function.role!) };
      return Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties['Roles'].some((x: { Ref: string }) => x.Ref === role.Ref))
        .flatMap((p) => p.Properties['PolicyDocument']['Statement'])
        .filter((st: { Resource: unknown }) => JSON.stringify(st.Resource).includes(keyId));
    };
    for (const route of liveRoutes) {
      const fn = resources[logicalIdOf(stack.functions[route.operationId]!.function)]!;
      const keyed = Boolean(route.needs.tables?.idempotency);
      expect(fn.Properties['Environment'].Variables['IDEMPOTENCY_KEY_SECRET'], route.operationId).toEqual(keyed ? { Ref: keyId } : undefined);
      expect(statementsOn(route.operationId).length > 0, route.operationId).toBe(keyed);
    }
  });

  it('needs no parameter at deploy: the Vault address and every setting come from the config file', () => {
    // The nested stacks' parameters are values their parent passes, never asked at deploy.
    for (const top of [stack.data, stack.api]) {
      const parameters = Object.keys(Template.fromStack(top).toJSON().Parameters ?? {});
      expect(
        parameters.filter((p) => p !== 'BootstrapVersion'),
        top.stackName,
      ).toEqual([]);
    }
    const relay = (template.toJSON().Resources as Resources)[logicalIdOf(stack.functions['relayRestAction']!.function)]!;
    expect(relay.Properties['Environment'].Variables).toMatchObject({
      VAULT_ADDR: 'https://vault.example.net:8200',
      VAULT_AUTH_METHOD: 'approle',
      SERVICE_NAME: 'netconfig',
    });
  });

  it('answers every API Gateway error as problem+json, and an unknown route as 404', () => {
    const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).map((r) => r['Properties']);
    const byType = Object.fromEntries(responses.map((r) => [r.ResponseType, r]));
    // Every type API Gateway has: a response of our own for each, so no answer is its bare {"message"}.
    const allTypes = Object.values(ResponseType)
      .filter((t): t is ResponseType => t instanceof ResponseType)
      .map((t) => t.responseType);
    expect(allTypes.length).toBeGreaterThan(15);
    for (const type of allTypes) {
      const r = byType[type];
      expect(r, type).toBeDefined();
      expect(r.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/problem+json'");
      const body = JSON.parse(r.ResponseTemplates['application/json'].replace('$context.error.messageString', '"message"'));
      expect(body).toMatchObject({
        type: expect.stringMatching(/^urn:netconfig:problem:/),
        title: expect.any(String),
        detail: expect.any(String),
        requestId: '$context.requestId',
      });
      // Only the two catch-alls keep API Gateway's status, which their template cannot know.
      if (type.startsWith('DEFAULT_')) expect(r.StatusCode, type).toBeUndefined();
      else expect(body.status, type).toBe(Number(r.StatusCode));
    }
    expect(byType['MISSING_AUTHENTICATION_TOKEN'].StatusCode).toBe('404');
    expect(byType['UNAUTHORIZED'].StatusCode).toBe('401');
    expect(byType['ACCESS_DENIED'].StatusCode).toBe('403');
    expect(byType['REQUEST_TOO_LARGE'].StatusCode).toBe('413');
  });

  it('has a stage with tracing and access logs', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      TracingEnabled: true,
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });

  it('passes the cdk-nag AwsSolutions checks, each suppression with a reason', () => {
    // The nested stacks' findings are reported on their parent's.
    const errors = [stack.data, stack.api].flatMap((top) => Annotations.fromStack(top).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')));
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`)).toEqual([]);
  });

  // `npm run bench` is run by hand; a function it cannot measure would break it only then.
  it('lets npm run bench measure every function under a name of its own, with a first call for each', () => {
    // Labelled as the local template reader labels them (tools/local/template.ts).
    // The path within its stack, nested stacks included.
    const labels = [stack.data, stack.api]
      .flatMap((s) => s.node.findAll())
      .filter((c) => c instanceof CfnFunction)
      .map((c) =>
        c.node.path
          .slice(Stack.of(c).node.path.length + 1)
          .replace(/\/(Function\/)?Resource$/, '')
          .replace(/\/Function$/, ''),
      );
    const operations = labels.map(operationOfLabel);
    expect(new Set(operations).size).toBe(operations.length);
    // The durable functions, the housekeeping and the scheduled run answer no request: nothing of theirs is a first call.
    const answering = operations.filter((o) => !['ComplianceBatch', 'ComplianceHousekeeping', 'RemediationRun', 'PlanScheduledRun'].includes(o));
    expect(answering.sort()).toEqual(['authorizer', ...liveRoutes.map((r) => r.operationId)].sort());
    const ctx = {
      round: 1,
      treeId: 'a'.repeat(24),
      simulatorUrl: 'http://127.0.0.1:1',
      simulatorCredentials: { username: 'u', password: 'p' },
      token: 't',
      runId: 'r',
    };
    for (const o of answering) expect(() => firstCallEvent(o, ctx), o).not.toThrow();
  });
});
