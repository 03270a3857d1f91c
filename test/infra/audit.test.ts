/**
 * The audit trail in the synthesized stacks: the access log names the caller, the changelog
 * table takes new items only (no role may update or delete one, and its resource policy denies
 * it to everyone), every log group keeps a year of logs (or the configured retention), outlives
 * the stack and, when configured, is archived; the dashboard's log queries stay within Logs
 * Insights' 50 log groups however many functions there are.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { tableSpecs } from '../../functions/platform/tables.js';
import { loadDeployConfig } from '../../infra/config.js';
import { localStackProps } from '../../infra/local-mode.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { MAX_QUERY_LOG_GROUPS } from '../../infra/constructs/observability.js';
import { APPEND_ONLY_DENIED, NetconfigService, type NetconfigStackProps } from '../../infra/stack.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate } from './service-template.js';
import { withSyntheticRoutes } from './synthetic-routes.js';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

const PRIVATE_EXAMPLE = path.join(PROJECT_ROOT, 'deploy', 'config.private.example.json');

const synth = (props: NetconfigStackProps = {}, file?: string) => {
  const app = new App({ context: NO_BUNDLING });
  const { stackName = 'Netconfig', ...settings } = file ? loadDeployConfig(file) : {};
  const service = new NetconfigService(app, stackName, { ...(file ? { settings: settings as never } : {}), ...props });
  const template = serviceTemplate(service);
  return { service, template, resources: template.toJSON().Resources as Record<string, Resource> };
};

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

describe('the caller in the access log', () => {
  it('logs each request as JSON with the authorizer’s principal and roles beside the standard fields', () => {
    const { resources } = synth();
    const [[, stage]] = ofType(resources, 'AWS::ApiGateway::Stage') as [[string, Resource]];
    const format = JSON.parse(stage.Properties['AccessLogSetting']['Format'] as string) as Record<string, string>;
    expect(format).toMatchObject({
      principal: '$context.authorizer.principalId',
      roles: '$context.authorizer.roles',
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
      authorizerError: '$context.authorizer.error',
    });
    expect(stage.Properties['AccessLogSetting']['DestinationArn']).toBeDefined();
  });
});

describe('the changelog, append-only', () => {
  const { service, template, resources } = synth();
  const changelogId = logicalIdOf(service.tables.changelog);
  type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
  const statements = ofType(resources, 'AWS::IAM::Policy').flatMap(([id, p]) =>
    (p.Properties['PolicyDocument']['Statement'] as Statement[]).map((s) => ({ id, roles: p.Properties['Roles'] as { Ref: string }[], ...s })),
  );
  const onChangelog = statements.filter((s) => s.Effect === 'Allow' && JSON.stringify(s.Resource).includes(`"${changelogId}"`));

  it('lets no role update, delete or batch-write changelog items; the functions that record changes may only put them', () => {
    const actions = new Set(onChangelog.flatMap((s) => [s.Action].flat()));
    expect(actions).toContain('dynamodb:PutItem');
    for (const denied of APPEND_ONLY_DENIED) expect(actions).not.toContain(denied);
    expect([...actions].filter((a) => a.includes('*'))).toEqual([]);
    // Nor through a statement on every resource.
    const anywhere = statements.filter((s) => s.Effect === 'Allow' && JSON.stringify(s.Resource) === '"*"').flatMap((s) => [s.Action].flat());
    expect(anywhere.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    // Exactly the routes that record changes, the remediation function (a run's end), the
    // housekeeping (the end of a run whose execution ended without it) and the plans' scheduled
    // run (a scheduled run started or skipped) may put entries.
    const putters = new Set(onChangelog.filter((s) => [s.Action].flat().includes('dynamodb:PutItem')).flatMap((s) => s.roles.map((r) => r.Ref)));
    const recording = [
      ...liveRoutes.filter((r) => r.needs.tables?.changelog === 'append').map((r) => r.operationId),
      'remediationRun',
      'complianceHousekeeping',
      'planScheduledRun',
    ];
    expect(recording.length).toBeGreaterThan(10);
    expect(new Set(recording.map((op) => logicalIdOf(service.functions[op]!.function.role!)))).toEqual(putters);
  });

  it('denies every principal the item updates and deletes by the table’s resource policy; no other table has one', () => {
    const tables = template.findResources('AWS::DynamoDB::GlobalTable') as Record<string, Resource>;
    const policy = tables[changelogId]!.Properties['Replicas'][0]['ResourcePolicy']['PolicyDocument'];
    // One Deny of exactly those actions to every principal (policy minimization may sort them and drop the statement id).
    expect(policy.Statement).toEqual([
      expect.objectContaining({ Effect: 'Deny', Principal: { AWS: '*' }, Action: [...APPEND_ONLY_DENIED].sort(), Resource: '*' }),
    ]);
    expect(APPEND_ONLY_DENIED).toEqual(expect.arrayContaining(['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']));
    for (const [id, table] of Object.entries(tables)) {
      if (id !== changelogId) expect(table.Properties['Replicas'][0]['ResourcePolicy'], id).toBeUndefined();
    }
    expect(Object.keys(tableSpecs).filter((k) => tableSpecs[k as keyof typeof tableSpecs].appendOnly)).toEqual(['changelog']);
  });

  it('refuses to synthesize a route that asks to write the changelog rather than append to it', () => {
    const routes = liveRoutes.map((r) =>
      r.operationId === 'putAdapter' ? { ...r, needs: { ...r.needs, tables: { ...r.needs.tables, changelog: 'write' as const } } } : r,
    );
    expect(() => synth({ routes })).toThrow(
      /the changelog table is append-only: a function may have 'append' access to it \(PutItem of new items\), never 'write'/,
    );
  });
});

describe('log retention, removal and archive', () => {
  it('keeps every log group a year by default and retains it when the stack is deleted', () => {
    const { resources } = synth();
    const groups = ofType(resources, 'AWS::Logs::LogGroup');
    // A log group per function, the access log and the execution log.
    expect(groups.length).toBeGreaterThanOrEqual(liveRoutes.length + 4);
    for (const [id, group] of groups) {
      expect(group.Properties['RetentionInDays'], id).toBe(365);
      expect([group.DeletionPolicy, group.UpdateReplacePolicy], id).toEqual(['Retain', 'Retain']);
    }
    expect(ofType(resources, 'AWS::Logs::SubscriptionFilter')).toEqual([]);
  });

  it('applies the configured retention and sends every log group to the archive destination', () => {
    const { resources } = synth({}, PRIVATE_EXAMPLE);
    const { logs } = loadDeployConfig(PRIVATE_EXAMPLE);
    const groups = ofType(resources, 'AWS::Logs::LogGroup');
    const filters = ofType(resources, 'AWS::Logs::SubscriptionFilter').map(([, f]) => f.Properties);
    for (const [id, group] of groups) {
      expect(group.Properties['RetentionInDays'], id).toBe(logs.retentionDays);
      expect(group.DeletionPolicy, id).toBe('Retain');
      expect(
        filters.filter((f) => JSON.stringify(f['LogGroupName']) === JSON.stringify({ Ref: id })),
        id,
      ).toEqual([{ LogGroupName: { Ref: id }, DestinationArn: logs.archive!.destinationArn, FilterPattern: '' }]);
    }
    expect(filters).toHaveLength(groups.length);
  });

  it('passes the role CloudWatch Logs assumes to a Firehose archive', () => {
    const app = new App({ context: NO_BUNDLING });
    const base = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.example.json'));
    const { stackName, ...settings } = base;
    const archive = {
      destinationArn: 'arn:aws:firehose:eu-west-1:123456789012:deliverystream/log-archive',
      roleArn: 'arn:aws:iam::123456789012:role/cwl-to-firehose',
    };
    const service = new NetconfigService(app, stackName, { settings: { ...settings, logs: { retentionDays: 3653, archive } } });
    const all = [service.api, ...Object.values(service.api.parts)].flatMap((s) =>
      Object.values(Template.fromStack(s).findResources('AWS::Logs::SubscriptionFilter')),
    );
    expect(all.length).toBeGreaterThan(liveRoutes.length);
    for (const f of all) expect(f['Properties']).toMatchObject({ DestinationArn: archive.destinationArn, RoleArn: archive.roleArn });
  });

  it('lets local mode delete its log groups with the stack', () => {
    const { resources } = synth(localStackProps());
    const groups = ofType(resources, 'AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(liveRoutes.length);
    for (const [id, group] of groups) expect(group.DeletionPolicy, id).toBe('Delete');
  });
});

/** A dashboard body (a `Fn::Join` of text and references) as JSON, each reference (`Ref`, `Fn::GetAtt`) written as what it names. */
const dashboardBody = (body: unknown): { widgets: { type: string; properties: Record<string, any> }[] } => {
  const text = (part: unknown): string => {
    if (typeof part === 'string') return part;
    const ref = part as { Ref?: string; 'Fn::GetAtt'?: string[]; 'Fn::Join'?: [string, unknown[]] };
    if (ref.Ref) return `<${ref.Ref}>`;
    if (ref['Fn::GetAtt']) return `<${ref['Fn::GetAtt'].join('.')}>`;
    if (ref['Fn::Join']) return ref['Fn::Join'][1].map(text).join(ref['Fn::Join'][0]);
    // Other values (imported table names in the graphs) matter not here.
    return '<value>';
  };
  return JSON.parse(text(body));
};

describe('the dashboard’s log queries', () => {
  it('name at most 50 log groups each, and every function’s between them, with 150 routes', () => {
    const app = new App({ context: NO_BUNDLING });
    const service = new NetconfigService(app, 'Netconfig', { routes: withSyntheticRoutes(150) });
    const [dashboard] = Object.values(Template.fromStack(service.api).findResources('AWS::CloudWatch::Dashboard'));
    const queries = dashboardBody(dashboard!['Properties']['DashboardBody']).widgets.filter((w) => w.type === 'log');
    const named = queries.map((w) => [...(w.properties['query'] as string).matchAll(/SOURCE '([^']+)'/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(1);
    for (const groups of named) expect(groups.length).toBeLessThanOrEqual(MAX_QUERY_LOG_GROUPS);
    const functions = Object.keys(service.functions).length;
    expect(functions).toBeGreaterThan(150);
    expect(new Set(named.flat()).size).toBe(functions);
    expect(named.flat()).toHaveLength(functions);
    // Even shares: no query left with a handful of groups.
    expect(Math.max(...named.map((g) => g.length)) - Math.min(...named.map((g) => g.length))).toBeLessThanOrEqual(1);
    for (const w of queries) expect(w.properties['query']).toContain('caller.subject');
  });
});
