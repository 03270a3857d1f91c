/**
 * Shared defaults for every function: Node.js 22 on arm64, ESM bundle minified by esbuild,
 * a log group of its own (kept by the deployment's log policy), X-Ray tracing, and least-privilege grants on a role shared by the
 * functions whose needs are identical (`FunctionRoles`).
 */
import { createHash } from 'node:crypto';
import { AssetHashType, DockerImage, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, ISubnet, IVpc } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, type Policy, PolicyStatement, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Runtime, Tracing, type DurableConfig } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_BUNDLES_CONTEXT, localBundleDir } from '../local-mode.js';
import { PROJECT_ROOT } from '../paths.js';
import type { TableAccess } from '../../functions/platform/route.js';

/**
 * Node built-ins the bundles obtain the way `require()` does rather than through an ES
 * `import`. For an imported built-in, Node 22 builds an ES-module facade by reading every one
 * of its exports, which runs the built-in's lazy getters on every cold start: `node:http`
 * then loads all of undici (~40 ms, nodejs/node#57649), `node:https` most of it again,
 * `node:process`, `node:fs` and `node:util` a few ms each, `node:net` the internals of
 * `BlockList` and `SocketAddress` (which only the address policy needs, when it checks an
 * address), and `node:timers` (which middy imports) all of `timers/promises`. esbuild aliases
 * each to a one-line CommonJS shim (`infra/build/node-builtins/<name>.cjs`:
 * `process.getBuiltinModule(name)`); paths are relative to the project root, where CDK runs
 * esbuild.
 */
export const NODE_BUILTIN_ALIASES: Readonly<Record<string, string>> = Object.fromEntries(
  // `fs/promises` is listed because an alias of `fs` also captures its subpaths.
  ['http', 'https', 'process', 'fs', 'fs/promises', 'util', 'crypto', 'net', 'timers'].flatMap((name) => {
    const shim = `./infra/build/node-builtins/${name.replace('/', '-')}.cjs`;
    return [
      [`--alias:${name}`, shim],
      [`--alias:node:${name}`, shim],
    ];
  }),
);

/**
 * The AWS SDK's default credential chain, replaced by its first link. Lambda always hands a
 * function its role's credentials in the environment (`AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), and local mode sets them too; the rest of the
 * chain (SSO, profiles, web identity, container and instance metadata, with their own STS and
 * SSO clients: about 95 KiB) is never reached, yet every cold start compiled it. Each client's
 * `runtimeConfig` imports `defaultProvider` from `@aws-sdk/credential-provider-node`; the alias
 * (`infra/build/aws-credentials.mjs`) makes that `fromEnv`.
 */
export const SDK_ALIASES: Readonly<Record<string, string>> = {
  '--alias:@aws-sdk/credential-provider-node': './infra/build/aws-credentials.mjs',
};

/**
 * How every function is bundled (esbuild through `NodejsFunction`). Exported so that the
 * benchmark (`bench/`) bundles its reference handlers exactly as the functions are bundled.
 */
export const FUNCTION_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  platform: 'node',
  minify: true,
  sourceMap: false,
  mainFields: ['module', 'main'],
  // Some dependencies are CommonJS and call require() for Node built-ins.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  externalModules: [],
  esbuildArgs: { ...NODE_BUILTIN_ALIASES, ...SDK_ALIASES },
} as const satisfies BundlingOptions;

export interface ServiceFunctionProps {
  /** Module under `functions/`, without extension, that exports `handler`. */
  readonly handler: string;
  readonly description: string;
  readonly environment?: Record<string, string>;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  /** Makes it a durable function (Lambda durable functions: checkpointed, replayed, up to a year). */
  readonly durableConfig?: DurableConfig;
  /**
   * A PEM file of private CA certificates, shipped in the bundle as `ca-bundle.pem` and named by
   * `NETCONFIG_CA_BUNDLE` (relative: resolved against `LAMBDA_TASK_ROOT`, the bundle root). The
   * shared HTTP client trusts those certificates in addition to the public roots.
   */
  readonly caBundle?: string;
  /**
   * Other files shipped in the bundle, by their name in it (its root): name → file or directory
   * on this machine (a directory is copied with its contents, as the built web console is).
   */
  readonly bundledFiles?: Readonly<Record<string, string>>;
  /** Runs the function in these subnets with these security groups. */
  readonly network?: FunctionNetwork;
  /** Reserved concurrency: both a guarantee and a cap. */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Everything the function may do beyond writing its logs and traces (and, in a VPC, managing
   * its network interfaces). Functions with the same set share one role (`FunctionRoles`).
   */
  readonly permissions?: readonly FunctionPermission[];
}

/**
 * One permission a function needs, under a canonical name. Two permissions with one name must
 * grant exactly the same: the name is what `FunctionRoles` compares.
 */
export interface FunctionPermission {
  /** E.g. `table:Netconfig/TreesTable:read`, `secrets:read`, `invoke:Netconfig/ComplianceBatchLive`. */
  readonly key: string;
  /** Grants the permission to a role (once per role). */
  readonly grant: (grantee: IGrantable) => void;
}

/**
 * Access to a table's items (and its indexes): reads; reads and PutItem (`append`: a transaction's
 * `Put` needs PutItem only, so no update, delete or batch write is granted); or reads and writes.
 */
export const tablePermission = (table: ITable, access: TableAccess): FunctionPermission => ({
  key: `table:${table.node.path}:${access}`,
  grant: (grantee) => {
    if (access === 'write') table.grantReadWriteData(grantee);
    else table.grantReadData(grantee);
    if (access === 'append') {
      table.grant(grantee, 'dynamodb:PutItem');
      // A put under a customer-managed key encrypts, as CDK's write grant allows it.
      table.encryptionKey?.grant(grantee, 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*');
    }
  },
});

/** What a function's role must allow: its permissions, and what its placement and kind add. */
export interface RoleNeeds {
  readonly permissions: readonly FunctionPermission[];
  /** In a VPC: AWSLambdaVPCAccessExecutionRole (network interfaces). */
  readonly vpc: boolean;
  /** A durable function: AWSLambdaBasicDurableExecutionRolePolicy instead of AWSLambdaBasicExecutionRole. */
  readonly durable: boolean;
}

/** The canonical signature of a set of needs: the sorted permission names and the managed policies. */
export const roleSignature = (needs: RoleNeeds): string =>
  JSON.stringify({
    managed: managedPolicyNames(needs),
    permissions: [...new Set(needs.permissions.map((p) => p.key))].sort(),
  });

const managedPolicyNames = (needs: Pick<RoleNeeds, 'vpc' | 'durable'>): string[] => [
  needs.durable ? 'service-role/AWSLambdaBasicDurableExecutionRolePolicy' : 'service-role/AWSLambdaBasicExecutionRole',
  ...(needs.vpc ? ['service-role/AWSLambdaVPCAccessExecutionRole'] : []),
];

/**
 * One execution role per distinct set of needs in a stack, instead of one per function: a stack
 * of one function per route would otherwise spend two resources (role and policy) per route
 * against CloudFormation's 500-resource limit. Least privilege is unchanged: functions share a
 * role only when their needs have the same signature (`roleSignature`), so each function can
 * do exactly what its own needs say. The role's logical id derives from the signature, so
 * adding a function never renames another's role, and its description lists the needs.
 *
 * Grant only through `permissions`: a grant made on a function afterwards would reach every
 * function that shares its role, so the synth fails when a role's policy allows more at the end
 * than its needs granted (statements identical to the granted ones, such as the X-Ray statement
 * CDK adds for each traced function, appear once and change nothing).
 */
export class FunctionRoles extends Construct {
  /** The stack's registry, created on first use. */
  static of(scope: IConstruct): FunctionRoles {
    const stack = Stack.of(scope);
    return (stack.node.tryFindChild(FUNCTION_ROLES_ID) as FunctionRoles | undefined) ?? new FunctionRoles(stack, FUNCTION_ROLES_ID);
  }

  readonly #roles = new Map<string, { role: Role; users: string[]; granted: readonly PolicyStatement[] }>();

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.node.addValidation({ validate: () => this.#widened() });
  }

  /** The role for these needs (created, and granted them, on first use); `user` names the function in the role's bookkeeping. */
  roleFor(needs: RoleNeeds, user: string): Role {
    const signature = roleSignature(needs);
    const known = this.#roles.get(signature);
    if (known) {
      known.users.push(user);
      return known.role;
    }
    const id = `Role${createHash('sha256').update(signature).digest('hex').slice(0, 10)}`;
    const what = [...new Set(needs.permissions.map((p) => p.key))].sort();
    const role = new Role(this, id, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description:
        `Functions that may: ${what.length ? what.join(', ') : 'write logs and traces only'}${needs.vpc ? ' (in the VPC)' : ''}${needs.durable ? ' (durable)' : ''}`.slice(
          0,
          1000,
        ),
      managedPolicies: managedPolicyNames(needs).map((name) => ManagedPolicy.fromAwsManagedPolicyName(name)),
    });
    // The statement CDK adds for each traced function (every ServiceFunction is traced), granted here with the rest.
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] }));
    const keys = new Set<string>();
    for (const p of needs.permissions) {
      if (keys.has(p.key)) continue;
      keys.add(p.key);
      p.grant(role);
    }
    this.#roles.set(signature, { role, users: [user], granted: this.#statements(role) });
    return role;
  }

  /**
   * The role's inline policy statements, as objects: compared when the synth validates, both
   * sides resolved then (a reference to another stack's table resolves differently before and
   * after CDK turns it into an export and a parameter).
   */
  #statements(role: Role): readonly PolicyStatement[] {
    const policy = role.node.tryFindChild('DefaultPolicy') as Policy | undefined;
    return [...((policy?.document as unknown as { statements?: PolicyStatement[] } | undefined)?.statements ?? [])];
  }

  /**
   * What a statement allows, one entry per action and resource (with its effect and conditions),
   * resolved now: the same whether CDK kept the statements as granted or merged them
   * (`@aws-cdk/aws-iam:minimizePolicies` merges them in place when the policy is first resolved).
   */
  #allows(st: PolicyStatement): string[] {
    const { Action, Resource, Sid: _sid, ...rest } = Stack.of(this).resolve(st.toStatementJson()) as Record<string, unknown>;
    return [Action].flat().flatMap((action) => [Resource].flat().map((resource) => JSON.stringify([action, resource, rest])));
  }

  /** A problem for each role whose policy allows more than its needs granted. */
  #widened(): string[] {
    return [...this.#roles.values()].flatMap(({ role, users, granted }) => {
      const allowed = new Set(granted.flatMap((st) => this.#allows(st)));
      const extra = [...new Set(this.#statements(role).flatMap((st) => this.#allows(st)))].filter((st) => !allowed.has(st));
      return extra.length
        ? [
            `${role.node.path} (shared by ${users.join(', ')}) was granted more than the needs it was made for: ${extra.join('; ')}. ` +
              'Declare the permission in the function’s `permissions`, so that only functions with the same needs share its role.',
          ]
        : [];
    });
  }

  /** Each role and the functions that use it (their construct paths). */
  get roles(): ReadonlyArray<{ readonly role: Role; readonly users: readonly string[] }> {
    return [...this.#roles.values()];
  }
}

const FUNCTION_ROLES_ID = 'FunctionRoles';

export interface FunctionNetwork {
  readonly vpc: IVpc;
  readonly subnets: readonly ISubnet[];
  readonly securityGroups: readonly ISecurityGroup[];
}

/** Where the CA bundle lands in a function's bundle, and the value of `NETCONFIG_CA_BUNDLE`. */
export const CA_BUNDLE_FILE = 'ca-bundle.pem';

/**
 * Bundling that also copies files of the deployment (a CA bundle, a pinned JWKS, the built console) into the
 * asset, after esbuild, into its output directory: name in the bundle → file on this machine.
 */
const bundlingWithFiles = (files: Readonly<Record<string, string>>): BundlingOptions => {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return {
    ...FUNCTION_BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      // inputDir is the project root (or its mount when bundling in Docker).
      afterBundling: (inputDir: string, outputDir: string) =>
        Object.entries(files).map(([name, source]) => {
          const relative = path.relative(PROJECT_ROOT, source);
          const inside = !relative.startsWith('..') && !path.isAbsolute(relative);
          return `cp -R ${quote(inside ? path.posix.join(inputDir, ...relative.split(path.sep)) : source)} ${quote(path.posix.join(outputDir, name))}`;
        }),
    },
  };
};

/** The files a function ships beside its code: `bundledFiles` and the CA bundle. */
const filesOf = (props: ServiceFunctionProps): Record<string, string> => ({
  ...props.bundledFiles,
  ...(props.caBundle ? { [CA_BUNDLE_FILE]: props.caBundle } : {}),
});

/**
 * In local mode, the bundle built ahead of the synth for this handler (see
 * `LOCAL_BUNDLES_CONTEXT`), when there is one; functions that ship files (a CA bundle, a pinned JWKS) are bundled as usual.
 */
const prebuiltBundle = (scope: Construct, props: ServiceFunctionProps): string | undefined => {
  const dir: unknown = scope.node.tryGetContext(LOCAL_BUNDLES_CONTEXT);
  if (typeof dir !== 'string' || !dir || Object.keys(filesOf(props)).length > 0 || ![true, 'true'].includes(scope.node.tryGetContext('local')))
    return undefined;
  const bundle = localBundleDir(dir, props.handler);
  return existsSync(path.join(bundle, 'index.mjs')) ? bundle : undefined;
};

/**
 * A prebuilt bundle as the function's code, staged the way `NodejsFunction` stages its own: as
 * a bundling whose output is hashed (here a copy of the bundle), so that the asset, its hash
 * and its metadata are the ones CDK writes when it runs esbuild itself.
 */
const prebuiltCode = (bundleDir: string): Code =>
  Code.fromAsset(bundleDir, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local bundling below always succeeds.
      image: DockerImage.fromRegistry('prebuilt-bundle'),
      local: {
        tryBundle: (outputDir: string) => {
          cpSync(bundleDir, outputDir, { recursive: true });
          return true;
        },
      },
    },
  });

export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** A durable function (`durableConfig`): its executions run on published versions, which are retained. */
  readonly durable: boolean;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.durable = props.durableConfig !== undefined;
    // Retention, removal and archive: the deployment's log policy (infra/constructs/log-policy.ts).
    this.logGroup = new LogGroup(this, 'Logs');
    const role = FunctionRoles.of(this).roleFor(
      { permissions: props.permissions ?? [], vpc: props.network !== undefined, durable: props.durableConfig !== undefined },
      this.node.path,
    );
    const prebuilt = prebuiltBundle(this, props);
    const files = filesOf(props);
    this.function = new NodejsFunction(this, 'Function', {
      role,
      ...(prebuilt
        ? { code: prebuiltCode(prebuilt), handler: 'index.handler' }
        : { entry: path.join(PROJECT_ROOT, 'functions', `${props.handler}.ts`), handler: 'handler' }),
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      environment: { NODE_ENV: 'production', ...props.environment, ...(props.caBundle ? { NETCONFIG_CA_BUNDLE: CA_BUNDLE_FILE } : {}) },
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      bundling: Object.keys(files).length > 0 ? bundlingWithFiles(files) : FUNCTION_BUNDLING,
      // A durable execution stays on the version it started on (up to its execution timeout) and
      // replays on it after every wait: a deploy must not delete that version. Retained here,
      // pruned once unused by the function's housekeeping (functions/compliance/housekeeping.ts).
      ...(props.durableConfig ? { durableConfig: props.durableConfig, currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN } } : {}),
      ...(props.network
        ? { vpc: props.network.vpc, vpcSubnets: { subnets: [...props.network.subnets] }, securityGroups: [...props.network.securityGroups] }
        : {}),
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
    });
  }
}
