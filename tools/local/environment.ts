/**
 * The environment each function runs with locally: the template's variables with local values
 * for the AWS references (`Ref` to a table → its local name), paths and URLs baked in at synth
 * time moved to this run's data directory and port, and the variables the Lambda runtime sets
 * (region, fake credentials, function name and memory, the DynamoDB Local endpoint). Nothing
 * else of the caller's environment leaks in: no real AWS credentials, no profile.
 */
import type { LocalNames } from './intrinsics.js';
import { resolveEnvironment, type CfnTemplate, type FunctionSpec } from './template.js';

/** A value baked in at synth time (`from`) and what it stands for in this run (`to`). */
export interface Rewrite {
  readonly from: string;
  readonly to: string;
}

export interface RuntimeFacts {
  readonly region: string;
  readonly dynamodbEndpoint: string;
  /** The local S3 server (absent: the functions get no S3 endpoint). */
  readonly s3Endpoint?: string;
  /** The local EventBridge simulator (absent: the functions get no EventBridge endpoint). */
  readonly eventsEndpoint?: string;
  /** The local EventBridge Scheduler (absent: the functions get no scheduler endpoint). */
  readonly schedulerEndpoint?: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly rewrites: readonly Rewrite[];
  /** The host's PATH, so that the function can spawn what Lambda's image would have. */
  readonly path?: string;
}

/** Applies the first rewrite whose `from` is the value or a path/URL prefix of it. */
export const rewrite = (value: string, rewrites: readonly Rewrite[]): string => {
  for (const { from, to } of rewrites) {
    if (value === from) return to;
    if (value.startsWith(`${from}/`)) return `${to}${value.slice(from.length)}`;
  }
  return value;
};

/** The complete environment of one function, and the template variables that had no local value. */
export const functionEnvironment = (
  fn: FunctionSpec,
  template: CfnTemplate,
  names: LocalNames,
  facts: RuntimeFacts,
): { environment: Record<string, string>; unresolved: string[] } => {
  const { values, unresolved } = resolveEnvironment(fn.environment, template, names);
  const own = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, rewrite(v, facts.rewrites)]));
  return {
    unresolved,
    environment: {
      PATH: facts.path ?? '/usr/local/bin:/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      ...own,
      // What the Lambda runtime sets; a function cannot override these there either.
      AWS_REGION: facts.region,
      AWS_DEFAULT_REGION: facts.region,
      AWS_ACCESS_KEY_ID: facts.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: facts.credentials.secretAccessKey,
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      LAMBDA_TASK_ROOT: fn.codeDir,
      _HANDLER: fn.handler,
      // The convention emulators use (sam local sets it): tracing libraries skip X-Ray, which is not there.
      AWS_SAM_LOCAL: 'true',
      // Not set by Lambda: points the SDK's DynamoDB client at DynamoDB Local.
      AWS_ENDPOINT_URL_DYNAMODB: facts.dynamodbEndpoint,
      // Likewise S3, at the local S3 server, with the bucket in the path (no DNS names on loopback).
      ...(facts.s3Endpoint ? { AWS_ENDPOINT_URL_S3: facts.s3Endpoint, S3_FORCE_PATH_STYLE: 'true' } : {}),
      // And EventBridge, at the local simulator that keeps the events (tools/simulators/eventbridge-simulator.ts).
      ...(facts.eventsEndpoint ? { AWS_ENDPOINT_URL_EVENTBRIDGE: facts.eventsEndpoint } : {}),
      // And the plans' schedules at the local scheduler (functions/plans/schedules.ts).
      ...(facts.schedulerEndpoint ? { SCHEDULER_ENDPOINT: facts.schedulerEndpoint } : {}),
    },
  };
};
