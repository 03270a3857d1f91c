/**
 * Reads a synthesized cloud assembly (`cdk.out`) into what the local gateway serves: the REST
 * API's methods with their paths, integrations and authorizers, the gateway responses, the
 * Lambda functions with their bundled code, and the DynamoDB tables. Pure apart from
 * {@link readCloudAssembly}, which reads the files.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveIntrinsics, type LocalNames, type TemplateLike } from './intrinsics.js';
import { mergeStacks, type StackTemplate } from './stacks.js';

type Json = Record<string, unknown>;

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Json;
  readonly Metadata?: Json;
}

export interface CfnTemplate extends TemplateLike {
  readonly Resources: Readonly<Record<string, CfnResource>>;
}

/** A synthesized stack: its template and where each bundled asset lives. */
export interface CloudAssembly {
  readonly stackName: string;
  readonly template: CfnTemplate;
  /** Asset hash (the S3 object key without `.zip`) → absolute directory of the bundled code. */
  readonly assetDirs: Readonly<Record<string, string>>;
  /** Directory of the assembly. */
  readonly outDir: string;
  /** Construct paths of the nested stacks inlined in `template` (`NetconfigApi/Runtime`): a function's label is its path within its stack. */
  readonly nestedStackPaths?: readonly string[];
}

export interface FunctionSpec {
  readonly logicalId: string;
  /** The physical name CloudFormation would have generated: `<stack>-<logical id>`, at most 64 characters. */
  readonly name: string;
  /** A short name for logs: the construct path without the stack and `Function/Resource`. */
  readonly label: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly runtime: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** The template's environment, intrinsics unresolved. */
  readonly environment: Readonly<Record<string, unknown>>;
  /** A durable function (`DurableConfig`): started through Lambda's Invoke API, run by the local durable runner. */
  readonly durable: boolean;
}

export interface TableSpec {
  readonly logicalId: string;
  readonly name: string;
  /** The table key the functions know it by (`trees` from `TREES_TABLE`), when one refers to it. */
  readonly key?: string;
  readonly keySchema: readonly { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
  readonly attributeDefinitions: readonly { AttributeName: string; AttributeType: 'S' | 'N' | 'B' }[];
  readonly globalSecondaryIndexes: readonly IndexSpec[];
  readonly localSecondaryIndexes: readonly IndexSpec[];
  readonly timeToLiveAttribute?: string;
}

export interface IndexSpec {
  readonly IndexName: string;
  readonly KeySchema: readonly { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
  readonly Projection: { ProjectionType?: string; NonKeyAttributes?: string[] };
}

export interface ProxyIntegration {
  readonly type: 'AWS_PROXY';
  readonly functionId: string;
  readonly timeoutMs: number;
  /** Response transfer mode STREAM: the function streams its answer (Lambda response streaming). */
  readonly stream?: true;
}

export interface IntegrationResponseSpec {
  readonly statusCode: string;
  readonly selectionPattern?: string;
  readonly responseParameters: Readonly<Record<string, string>>;
  readonly responseTemplates: Readonly<Record<string, string>>;
}

export interface MockIntegration {
  readonly type: 'MOCK';
  readonly requestTemplates: Readonly<Record<string, string>>;
  readonly passthroughBehavior: 'WHEN_NO_MATCH' | 'WHEN_NO_TEMPLATES' | 'NEVER';
  readonly integrationResponses: readonly IntegrationResponseSpec[];
  readonly timeoutMs: number;
}

export interface MethodSpec {
  readonly logicalId: string;
  /** `GET`, `POST`… or `ANY`. */
  readonly httpMethod: string;
  /** The resource path in API Gateway's form: `/configuration_manager/configs/{treeId}`. */
  readonly resourcePath: string;
  /** A short stable id for `requestContext.resourceId`. */
  readonly resourceId: string;
  readonly operationName?: string;
  readonly authorizerId?: string;
  readonly apiKeyRequired: boolean;
  readonly integration: ProxyIntegration | MockIntegration;
}

export interface AuthorizerSpec {
  readonly logicalId: string;
  readonly name: string;
  readonly type: 'REQUEST' | 'TOKEN';
  readonly functionId: string;
  /** `method.request.header.Authorization`, … */
  readonly identitySources: readonly string[];
  readonly ttlSeconds: number;
  /** TOKEN authorizers only: a regular expression the token must match. */
  readonly identityValidationExpression?: string;
}

export interface GatewayResponseSpec {
  readonly type: string;
  readonly statusCode?: number;
  readonly responseParameters: Readonly<Record<string, string>>;
  readonly responseTemplates: Readonly<Record<string, string>>;
}

export interface ApiModel {
  readonly stackName: string;
  readonly stageName: string;
  readonly stageVariables: Readonly<Record<string, string>> | null;
  readonly binaryMediaTypes: readonly string[];
  readonly methods: readonly MethodSpec[];
  readonly authorizers: Readonly<Record<string, AuthorizerSpec>>;
  readonly gatewayResponses: Readonly<Record<string, GatewayResponseSpec>>;
  readonly functions: Readonly<Record<string, FunctionSpec>>;
  readonly tables: Readonly<Record<string, TableSpec>>;
  /** The local names of the S3 buckets it declares, by logical id (created on the local S3 server). */
  readonly buckets: Readonly<Record<string, string>>;
  /** The local names of the event buses it declares, by logical id (known to the local EventBridge simulator). */
  readonly eventBuses: Readonly<Record<string, string>>;
}

/** Why a template cannot be served locally. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** API Gateway's integration timeout when a method sets none: 29 s. */
export const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * Reads the assembly CDK wrote: `manifest.json` names the stacks' templates and asset
 * manifests; the asset manifests map each asset hash to its bundled directory. The stacks of
 * the assembly (the stateful stack and the API stack, its nested stacks inlined: see
 * `stacks.ts`) are read as one template, named after the first of them (the one the others
 * depend on), or after `stackName` when given.
 */
export const readCloudAssembly = (outDir: string, stackName?: string): CloudAssembly => {
  const readJson = (file: string): Json => JSON.parse(readFileSync(path.join(outDir, file), 'utf8')) as Json;
  const manifest = readJson('manifest.json') as {
    artifacts?: Record<string, { type: string; properties?: Json; displayName?: string; dependencies?: string[] }>;
  };
  const artifacts = Object.entries(manifest.artifacts ?? {});
  const stacks = artifacts.filter(([, a]) => a.type === 'aws:cloudformation:stack');
  if (!stacks.length) throw new TemplateError(`the assembly in ${outDir} has no stack`);
  if (stackName && !stacks.some(([id]) => id === stackName)) throw new TemplateError(`the assembly in ${outDir} has no stack ${stackName}`);
  // Dependencies first: a stack's exports are read before the stacks that import them.
  const ordered: typeof stacks = [];
  const visit = (entry: (typeof stacks)[number]) => {
    if (ordered.includes(entry)) return;
    for (const dep of entry[1].dependencies ?? []) {
      const found = stacks.find(([id]) => id === dep);
      if (found) visit(found);
    }
    ordered.push(entry);
  };
  for (const entry of stacks) visit(entry);
  let template: CfnTemplate;
  const nestedStackPaths: string[] = [];
  try {
    template = mergeStacks(
      ordered.map(([id, stack]) => ({
        name: id,
        template: readJson(String(stack.properties?.['templateFile'] ?? `${id}.template.json`)) as unknown as StackTemplate,
      })),
      (resource) => {
        const file = resource.Metadata?.['aws:asset:path'];
        const at = /^(.*)\.NestedStack\/[^/]+\.NestedStackResource$/.exec(String(resource.Metadata?.['aws:cdk:path'] ?? ''));
        if (at) nestedStackPaths.push(at[1]!);
        return typeof file === 'string' && existsSync(path.join(outDir, file)) ? (readJson(file) as unknown as StackTemplate) : undefined;
      },
    ) as unknown as CfnTemplate;
  } catch (error) {
    throw new TemplateError(`the stacks in ${outDir} cannot be read as one: ${(error as Error).message}`);
  }
  const assetDirs: Record<string, string> = {};
  for (const [, artifact] of artifacts) {
    if (artifact.type !== 'cdk:asset-manifest') continue;
    const file = String(artifact.properties?.['file'] ?? '');
    if (!file || !existsSync(path.join(outDir, file))) continue;
    const assets = readJson(file) as { files?: Record<string, { source?: { path?: string } }> };
    for (const [hash, asset] of Object.entries(assets.files ?? {})) {
      if (asset.source?.path) assetDirs[hash] = path.resolve(outDir, asset.source.path);
    }
  }
  return { stackName: stackName ?? ordered[0]![0], template, assetDirs, outDir: path.resolve(outDir), nestedStackPaths };
};

const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const asRecord = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const stringRecord = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(asRecord(v)).filter(([, x]) => typeof x === 'string')) as Record<string, string>;

/** The logical id a `{ Ref }` or `{ Fn::GetAtt: [id, attr] }` points to. */
export const referencedId = (v: unknown): string | undefined => {
  const r = asRecord(v);
  if (typeof r['Ref'] === 'string') return r['Ref'];
  const att = r['Fn::GetAtt'];
  if (Array.isArray(att) && typeof att[0] === 'string') return att[0];
  if (typeof att === 'string') return att.split('.')[0];
  return undefined;
};

/** Every logical id of a given type referenced anywhere inside `v` (for integration URIs). */
const referencedIds = (v: unknown, out: string[] = []): string[] => {
  if (Array.isArray(v)) for (const x of v) referencedIds(x, out);
  else if (v && typeof v === 'object') {
    const id = referencedId(v);
    if (id) out.push(id);
    else for (const x of Object.values(v)) referencedIds(x, out);
  }
  return out;
};

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);

/** A short, stable id of the kind API Gateway gives resources (`a1b2c3`). */
export const shortId = (logicalId: string): string => {
  let h = 2166136261;
  for (const c of logicalId) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h.toString(36).padStart(6, '0').slice(-6);
};

/** The physical name CloudFormation would generate, `<stack>-<logical id>`, cut to `max` characters. */
export const physicalName = (stackName: string, logicalId: string, max: number): string => `${stackName}-${logicalId}`.slice(0, max);

/** A bucket's local name: as {@link physicalName}, in the lowercase letters, digits and `-` S3 allows, at most 63. */
export const bucketName = (stackName: string, logicalId: string): string =>
  physicalName(stackName, logicalId, 63)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/-+$/, '');

/** The local names of the template's resources, for {@link resolveIntrinsics}. */
export const localNames = (
  template: CfnTemplate,
  context: { stackName: string; region: string; accountId: string; apiId: string; stageName?: string },
): LocalNames => {
  const { stackName, region, accountId, apiId } = context;
  const name = (logicalId: string): string => {
    const r = template.Resources[logicalId];
    const p = r?.Properties ?? {};
    switch (r?.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return asString(p['TableName']) ?? physicalName(stackName, logicalId, 255);
      case 'AWS::Lambda::Function':
        return asString(p['FunctionName']) ?? physicalName(stackName, logicalId, 64);
      case 'AWS::IAM::Role':
        return asString(p['RoleName']) ?? physicalName(stackName, logicalId, 64);
      case 'AWS::Logs::LogGroup':
        return asString(p['LogGroupName']) ?? physicalName(stackName, logicalId, 512);
      case 'AWS::S3::Bucket':
        return asString(p['BucketName']) ?? bucketName(stackName, logicalId);
      case 'AWS::Events::EventBus':
        return asString(p['Name']) ?? physicalName(stackName, logicalId, 256);
      default:
        return physicalName(stackName, logicalId, 255);
    }
  };
  return {
    region,
    accountId,
    stackName,
    ref: (logicalId, type) => {
      switch (type) {
        case 'AWS::ApiGateway::RestApi':
          return apiId;
        case 'AWS::ApiGateway::Stage':
          return asString(template.Resources[logicalId]?.Properties?.['StageName']) ?? context.stageName ?? logicalId;
        case 'AWS::ApiGateway::Resource':
        case 'AWS::ApiGateway::Authorizer':
        case 'AWS::ApiGateway::Deployment':
          return shortId(logicalId);
        case 'AWS::SecretsManager::Secret':
          return `arn:aws:secretsmanager:${region}:${accountId}:secret:${name(logicalId)}-${shortId(logicalId)}`;
        case 'AWS::Lambda::Alias': {
          // The alias ARN: its function (a Ref to it, or a name) and the alias name.
          const p = template.Resources[logicalId]?.Properties ?? {};
          const target = asRecord(p['FunctionName'])['Ref'];
          const fnName = typeof target === 'string' ? name(target) : (asString(p['FunctionName']) ?? logicalId);
          return `arn:aws:lambda:${region}:${accountId}:function:${fnName}:${asString(p['Name']) ?? logicalId}`;
        }
        default:
          return name(logicalId);
      }
    },
    getAtt: (logicalId, type, attribute) => {
      const n = name(logicalId);
      switch (`${type}.${attribute}`) {
        case 'AWS::DynamoDB::Table.Arn':
        case 'AWS::DynamoDB::GlobalTable.Arn':
          return `arn:aws:dynamodb:${region}:${accountId}:table/${n}`;
        case 'AWS::DynamoDB::Table.StreamArn':
        case 'AWS::DynamoDB::GlobalTable.StreamArn':
          return `arn:aws:dynamodb:${region}:${accountId}:table/${n}/stream/1970-01-01T00:00:00.000`;
        case 'AWS::Lambda::Function.Arn':
          return `arn:aws:lambda:${region}:${accountId}:function:${n}`;
        case 'AWS::IAM::Role.Arn':
          return `arn:aws:iam::${accountId}:role/${n}`;
        case 'AWS::Logs::LogGroup.Arn':
          return `arn:aws:logs:${region}:${accountId}:log-group:${n}:*`;
        case 'AWS::S3::Bucket.Arn':
          return `arn:aws:s3:::${n}`;
        case 'AWS::Events::EventBus.Arn':
          return `arn:aws:events:${region}:${accountId}:event-bus/${n}`;
        case 'AWS::ApiGateway::RestApi.RootResourceId':
          return shortId(`${logicalId}/root`);
        case 'AWS::SecretsManager::Secret.Id':
          return `arn:aws:secretsmanager:${region}:${accountId}:secret:${n}-${shortId(logicalId)}`;
        default:
          return undefined;
      }
    },
  };
};

const resolveFunctionId = (template: CfnTemplate, uri: unknown, where: string): string => {
  const isFunction = (id: string) => template.Resources[id]?.Type === 'AWS::Lambda::Function';
  for (const id of referencedIds(uri)) {
    if (isFunction(id)) return id;
    // An alias (the `live` alias of a canary release): locally, its function serves every version.
    const resource = template.Resources[id];
    const fn = resource?.Type === 'AWS::Lambda::Alias' ? referencedIds(resource.Properties?.['FunctionName']).find(isFunction) : undefined;
    if (fn) return fn;
  }
  throw new TemplateError(`${where}: its URI does not name a Lambda function of this stack`);
};

/**
 * The API the template declares: the one `AWS::ApiGateway::RestApi`, its resource tree walked
 * from the root (`PathPart`, `ParentId`), its methods, authorizers and gateway responses, and
 * the functions and tables they use.
 */
export const parseTemplate = (assembly: Pick<CloudAssembly, 'stackName' | 'template' | 'assetDirs' | 'outDir' | 'nestedStackPaths'>): ApiModel => {
  const { template, stackName } = assembly;
  const resources = Object.entries(template.Resources ?? {});
  const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);

  const apis = ofType('AWS::ApiGateway::RestApi');
  if (apis.length !== 1) throw new TemplateError(`the stack must declare exactly one REST API, it declares ${apis.length}`);
  const [apiId, api] = apis[0]!;
  const belongsToApi = (r: CfnResource) => referencedId(r.Properties?.['RestApiId']) === apiId;

  // Resource paths: walk ParentId up to the root (GetAtt RootResourceId).
  const apiResources = new Map(ofType('AWS::ApiGateway::Resource').filter(([, r]) => belongsToApi(r)));
  const paths = new Map<string, string>();
  const pathOf = (id: string, seen: string[] = []): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const r = apiResources.get(id);
    if (!r) throw new TemplateError(`resource ${id} is not part of the REST API`);
    if (seen.includes(id)) throw new TemplateError(`resource ${id} is its own ancestor`);
    const parent = r.Properties?.['ParentId'];
    const parentId = referencedId(parent);
    const isRoot = asRecord(parent)['Fn::GetAtt'] !== undefined && parentId === apiId;
    const prefix = isRoot ? '' : pathOf(parentId ?? '', [...seen, id]);
    const part = asString(r.Properties?.['PathPart']);
    if (!part) throw new TemplateError(`resource ${id} has no PathPart`);
    const full = `${prefix}/${part}`;
    paths.set(id, full);
    return full;
  };

  const functions: Record<string, FunctionSpec> = {};
  for (const [id, r] of ofType('AWS::Lambda::Function')) {
    const p = r.Properties ?? {};
    const code = asRecord(p['Code']);
    const key = asString(code['S3Key']);
    const hash = key?.replace(/\.zip$/, '');
    const metaPath = asString(r.Metadata?.['aws:asset:path']);
    const codeDir = (hash && assembly.assetDirs[hash]) ?? (metaPath ? path.resolve(assembly.outDir, metaPath) : undefined);
    if (!codeDir) {
      throw new TemplateError(`function ${id}: its code is not a bundled asset of this assembly (inline and external code are not supported locally)`);
    }
    const cdkPath = asString(r.Metadata?.['aws:cdk:path']) ?? id;
    // The path within its stack: `NetconfigApi/Runtime/GetProfile/Function/Resource` → `GetProfile`.
    const nested = (assembly.nestedStackPaths ?? []).filter((n) => cdkPath.startsWith(`${n}/`)).sort((a, b) => b.length - a.length)[0];
    const inStack = nested ? cdkPath.slice(nested.length + 1) : cdkPath.replace(/^[^/]+\//, '');
    functions[id] = {
      logicalId: id,
      name: asString(p['FunctionName']) ?? physicalName(stackName, id, 64),
      label: inStack.replace(/\/(Function\/)?Resource$/, '').replace(/\/Function$/, ''),
      codeDir,
      handler: asString(p['Handler']) ?? 'index.handler',
      runtime: asString(p['Runtime']) ?? 'nodejs22.x',
      timeoutSeconds: typeof p['Timeout'] === 'number' ? p['Timeout'] : 3,
      memoryMb: typeof p['MemorySize'] === 'number' ? p['MemorySize'] : 128,
      environment: asRecord(asRecord(p['Environment'])['Variables']),
      durable: p['DurableConfig'] !== undefined,
    };
  }

  // Which table key each table has: the functions get `<KEY>_TABLE: { Ref: table }`.
  const tableKeys = new Map<string, string>();
  for (const fn of Object.values(functions)) {
    for (const [name, value] of Object.entries(fn.environment)) {
      const target = referencedId(value);
      const match = /^([A-Z0-9]+)_TABLE$/.exec(name);
      if (match && target && TABLE_TYPES.has(template.Resources[target]?.Type ?? '')) tableKeys.set(target, match[1]!.toLowerCase());
    }
  }
  const tables: Record<string, TableSpec> = {};
  for (const [id, r] of resources.filter(([, x]) => TABLE_TYPES.has(x.Type))) {
    const p = r.Properties ?? {};
    const ttl = asRecord(p['TimeToLiveSpecification']);
    const key = tableKeys.get(id);
    tables[id] = {
      logicalId: id,
      name: asString(p['TableName']) ?? physicalName(stackName, id, 255),
      ...(key ? { key } : {}),
      keySchema: (p['KeySchema'] ?? []) as TableSpec['keySchema'],
      attributeDefinitions: (p['AttributeDefinitions'] ?? []) as TableSpec['attributeDefinitions'],
      globalSecondaryIndexes: (p['GlobalSecondaryIndexes'] ?? []) as IndexSpec[],
      localSecondaryIndexes: (p['LocalSecondaryIndexes'] ?? []) as IndexSpec[],
      ...(ttl['Enabled'] !== false && typeof ttl['AttributeName'] === 'string' ? { timeToLiveAttribute: ttl['AttributeName'] } : {}),
    };
  }

  const authorizers: Record<string, AuthorizerSpec> = {};
  for (const [id, r] of ofType('AWS::ApiGateway::Authorizer').filter(([, x]) => belongsToApi(x))) {
    const p = r.Properties ?? {};
    const type = asString(p['Type']);
    if (type !== 'REQUEST' && type !== 'TOKEN') {
      throw new TemplateError(`authorizer ${id}: type ${type} is not supported locally (only Lambda REQUEST and TOKEN authorizers)`);
    }
    const source = asString(p['IdentitySource']) ?? '';
    authorizers[id] = {
      logicalId: id,
      name: asString(p['Name']) ?? id,
      type,
      functionId: resolveFunctionId(template, p['AuthorizerUri'], `authorizer ${id}`),
      identitySources: source
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      ttlSeconds: typeof p['AuthorizerResultTtlInSeconds'] === 'number' ? p['AuthorizerResultTtlInSeconds'] : 300,
      ...(asString(p['IdentityValidationExpression']) ? { identityValidationExpression: asString(p['IdentityValidationExpression'])! } : {}),
    };
  }

  const methods: MethodSpec[] = [];
  for (const [id, r] of ofType('AWS::ApiGateway::Method').filter(([, x]) => belongsToApi(x))) {
    const p = r.Properties ?? {};
    const resourceRef = p['ResourceId'];
    const resourceLogicalId = referencedId(resourceRef);
    const onRoot = resourceLogicalId === apiId;
    const resourcePath = onRoot ? '/' : pathOf(resourceLogicalId ?? '');
    const integration = asRecord(p['Integration']);
    const timeoutMs = typeof integration['TimeoutInMillis'] === 'number' ? integration['TimeoutInMillis'] : DEFAULT_INTEGRATION_TIMEOUT_MS;
    const where = `method ${id} (${asString(p['HttpMethod'])} ${resourcePath})`;
    let spec: ProxyIntegration | MockIntegration;
    switch (integration['Type']) {
      case 'AWS_PROXY':
        spec = {
          type: 'AWS_PROXY',
          functionId: resolveFunctionId(template, integration['Uri'], where),
          timeoutMs,
          ...(integration['ResponseTransferMode'] === 'STREAM' ? { stream: true as const } : {}),
        };
        break;
      case 'MOCK':
        spec = {
          type: 'MOCK',
          requestTemplates: stringRecord(integration['RequestTemplates']),
          passthroughBehavior: (asString(integration['PassthroughBehavior']) ?? 'WHEN_NO_MATCH') as MockIntegration['passthroughBehavior'],
          integrationResponses: ((integration['IntegrationResponses'] ?? []) as Json[]).map((ir) => ({
            statusCode: String(ir['StatusCode']),
            ...(asString(ir['SelectionPattern']) !== undefined ? { selectionPattern: asString(ir['SelectionPattern'])! } : {}),
            responseParameters: stringRecord(ir['ResponseParameters']),
            responseTemplates: stringRecord(ir['ResponseTemplates']),
          })),
          timeoutMs,
        };
        break;
      default:
        throw new TemplateError(`${where}: integration type ${String(integration['Type'])} is not supported locally (AWS_PROXY and MOCK are)`);
    }
    const authorizationType = asString(p['AuthorizationType']) ?? 'NONE';
    if (authorizationType !== 'NONE' && authorizationType !== 'CUSTOM') {
      throw new TemplateError(`${where}: authorization type ${authorizationType} is not supported locally (NONE and CUSTOM are)`);
    }
    const authorizerId = authorizationType === 'CUSTOM' ? referencedId(p['AuthorizerId']) : undefined;
    if (authorizationType === 'CUSTOM' && (!authorizerId || !authorizers[authorizerId])) {
      throw new TemplateError(`${where}: its authorizer is not an authorizer of this API`);
    }
    methods.push({
      logicalId: id,
      httpMethod: (asString(p['HttpMethod']) ?? 'ANY').toUpperCase(),
      resourcePath,
      resourceId: shortId(resourceLogicalId ?? id),
      ...(asString(p['OperationName']) ? { operationName: asString(p['OperationName'])! } : {}),
      ...(authorizerId ? { authorizerId } : {}),
      apiKeyRequired: p['ApiKeyRequired'] === true,
      integration: spec,
    });
  }

  const gatewayResponses: Record<string, GatewayResponseSpec> = {};
  for (const [, r] of ofType('AWS::ApiGateway::GatewayResponse').filter(([, x]) => belongsToApi(x))) {
    const p = r.Properties ?? {};
    const type = asString(p['ResponseType']);
    if (!type) continue;
    const status = p['StatusCode'] !== undefined ? Number(p['StatusCode']) : undefined;
    gatewayResponses[type] = {
      type,
      ...(status !== undefined && Number.isInteger(status) ? { statusCode: status } : {}),
      responseParameters: stringRecord(p['ResponseParameters']),
      responseTemplates: stringRecord(p['ResponseTemplates']),
    };
  }

  const stages = ofType('AWS::ApiGateway::Stage').filter(([, x]) => belongsToApi(x));
  const deploymentStage = ofType('AWS::ApiGateway::Deployment').find(([, x]) => belongsToApi(x) && asString(x.Properties?.['StageName']));
  const stage = stages[0]?.[1].Properties ?? {};
  const stageName = asString(stage['StageName']) ?? asString(deploymentStage?.[1].Properties?.['StageName']) ?? 'prod';
  const variables = stringRecord(stage['Variables']);

  return {
    stackName,
    stageName,
    stageVariables: Object.keys(variables).length ? variables : null,
    binaryMediaTypes: ((api.Properties?.['BinaryMediaTypes'] ?? []) as unknown[]).filter((x): x is string => typeof x === 'string'),
    methods,
    authorizers,
    gatewayResponses,
    functions,
    tables,
    buckets: Object.fromEntries(
      resources.filter(([, r]) => r.Type === 'AWS::S3::Bucket').map(([id, r]) => [id, asString(r.Properties?.['BucketName']) ?? bucketName(stackName, id)]),
    ),
    eventBuses: Object.fromEntries(
      resources
        .filter(([, r]) => r.Type === 'AWS::Events::EventBus')
        .map(([id, r]) => [id, asString(r.Properties?.['Name']) ?? physicalName(stackName, id, 256)]),
    ),
  };
};

/** Resolves a function's environment against local names; unresolvable variables are reported, not set. */
export const resolveEnvironment = (
  environment: Readonly<Record<string, unknown>>,
  template: CfnTemplate,
  names: LocalNames,
): { values: Record<string, string>; unresolved: string[] } => {
  const values: Record<string, string> = {};
  const unresolved: string[] = [];
  for (const [key, raw] of Object.entries(environment)) {
    try {
      const v = resolveIntrinsics(raw, template, names);
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') values[key] = String(v);
      else unresolved.push(key);
    } catch {
      unresolved.push(key);
    }
  }
  return { values, unresolved };
};
