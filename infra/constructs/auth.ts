/**
 * Who may call what: a Lambda REQUEST authorizer that verifies JWT bearer tokens against an
 * issuer's JWKS and returns a policy over every route the caller's roles allow. By default
 * the issuer is a Cognito user pool ({@link UserDirectory}, in the stateful stack), with one group per role.
 */
import { Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { IdentitySource, RequestAuthorizer } from 'aws-cdk-lib/aws-apigateway';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { CfnUserPoolGroup, Mfa, UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { ROLES } from '../../functions/platform/route.js';
import { AUTHORIZER_FAILURES_METRIC, DEFAULT_METRICS_NAMESPACE } from '../../functions/platform/metrics.js';
import { JWKS_FILE_VARIABLE } from '../../functions/authorizer/environment.js';
import type { CanaryMode, MfaSetting } from '../config.js';
import { releaseTarget } from './canary.js';
import { ServiceFunction, type FunctionNetwork } from './service-function.js';

export interface AuthProps {
  /** The user pool whose tokens the authorizer verifies (the stateful stack's); used when no issuer is given. */
  readonly directory?: UserDirectory;
  /** An external issuer; when set, no user pool is used. */
  readonly issuer?: string;
  readonly audience?: string;
  readonly jwksUrl?: string;
  /** The claim that holds the roles array. Default `cognito:groups`. */
  readonly rolesClaim?: string;
  /** How long API Gateway caches a token's policy. */
  readonly cacheTtl?: Duration;
  readonly environment?: Record<string, string>;
  /**
   * The issuer's public keys, pinned: a JWKS file shipped with the authorizer, which verifies
   * with these keys only and never fetches (`jwksUrl` is then unused).
   */
  readonly jwksFile?: string;
  /** Runs the authorizer in these subnets: to reach an issuer on a private network. */
  readonly network?: FunctionNetwork;
  /** Private CAs the authorizer trusts, besides the public roots, when it fetches the JWKS. */
  readonly caBundle?: string;
  /**
   * Reserved concurrency of the authorizer: every authorized route waits on it, so it keeps
   * instances of its own however many slow relays are running.
   */
  readonly reservedConcurrentExecutions?: number;
  /** How a new version of the authorizer takes traffic (through its `live` alias); absent or "off": updated in place. */
  readonly canary?: CanaryMode;
  /** The service's name, the stem of the release alarms' names. */
  readonly serviceName?: string;
}

const MFA: Readonly<Record<MfaSetting, Mfa>> = { required: Mfa.REQUIRED, optional: Mfa.OPTIONAL, off: Mfa.OFF };

/**
 * The default issuer: a Cognito user pool with one group per role, and the app client whose id
 * is the tokens' audience. Stateful (users, passwords, group memberships): it lives in the
 * stateful stack, retained on removal, under the construct id `Auth` that keeps the logical
 * ids the pool had when it shared one stack with the API.
 */
export class UserDirectory extends Construct {
  readonly userPool: UserPool;
  readonly userPoolClient: UserPoolClient;

  /** `mfa`: multi-factor sign-in with an authenticator app (TOTP; SMS is never offered); absent: the template does not set it. */
  constructor(scope: Construct, id: string, mfa?: MfaSetting) {
    super(scope, id);
    const pool = new UserPool(this, 'Users', {
      ...(mfa ? { mfa: MFA[mfa], ...(mfa === 'off' ? {} : { mfaSecondFactor: { otp: true, sms: false } }) } : {}),
      selfSignUpEnabled: false,
      signInAliases: { username: true, email: true },
      passwordPolicy: { minLength: 12, requireDigits: true, requireLowercase: true, requireUppercase: true, requireSymbols: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // USER_PASSWORD_AUTH lets operators fetch an ID token with the AWS CLI
    // (`aws cognito-idp initiate-auth`); SRP stays on for interactive apps. The ID token is
    // the one to send: it carries `aud` (this client's id) and `cognito:groups`.
    const client = new UserPoolClient(this, 'Client', {
      userPool: pool,
      authFlows: { userSrp: true, userPassword: true },
      generateSecret: false,
      preventUserExistenceErrors: true,
      // No hosted-UI OAuth flows: CDK's default would enable the implicit grant with an
      // example.com callback.
      disableOAuth: true,
    });
    // Retained like the pool: a replaced client changes the audience of every token, a deleted group loses its members.
    client.applyRemovalPolicy(RemovalPolicy.RETAIN);
    for (const role of ROLES) {
      new CfnUserPoolGroup(this, `Group-${role}`, { userPoolId: pool.userPoolId, groupName: role }).applyRemovalPolicy(RemovalPolicy.RETAIN);
    }
    this.userPool = pool;
    this.userPoolClient = client;
  }
}

/** Where a pinned JWKS lands in the authorizer's bundle, and the value of `JWKS_FILE`. */
export const PINNED_JWKS_FILE = 'jwks.json';

/**
 * The authorizer's memory, which sets its CPU share (Lambda gives a full vCPU at 1,769 MB). Every
 * request that misses the policy cache waits on it, and its cold start is CPU-bound: importing
 * the verifier, the TLS handshake of the JWKS fetch (with a private CA bundle, a secure context
 * of ~120 roots), the first signature check. About 120 ms of CPU on a full core
 * (docs/performance.md) take about 830 ms at 256 MB and about 210 ms at 1,024 MB; a warm call
 * is a few tens of microseconds of CPU either way, billed at the 1 ms minimum, so the larger
 * size costs little more per call and takes most of the cold start off the request's path.
 */
export const AUTHORIZER_MEMORY_MB = 1024;

export class Auth extends Construct {
  readonly authorizer: RequestAuthorizer;
  readonly function: ServiceFunction;
  /** The `aud` values the authorizer accepts: the configured audience, and the clients added by {@link acceptAudience}. */
  readonly #audiences: string[] = [];

  constructor(scope: Construct, id: string, props: AuthProps) {
    super(scope, id);
    // The region of this stack (the stacks of one deployment share one): no export of the other stack's region.
    const issuer =
      props.issuer ?? (props.directory ? `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${props.directory.userPool.userPoolId}` : undefined);
    const audience = props.issuer ? props.audience : (props.audience ?? props.directory?.userPoolClient.userPoolClientId);
    if (!issuer) throw new Error('auth: an issuer or a user directory is required');
    if (!audience) throw new Error('auth: an audience is required with an external issuer');
    this.#audiences.push(audience);
    this.function = new ServiceFunction(this, 'Authorizer', {
      handler: 'authorizer/handlers/authorize',
      description: 'Verifies bearer JWTs and returns the policy of the caller’s roles',
      memorySize: AUTHORIZER_MEMORY_MB,
      timeout: Duration.seconds(5),
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      ...(props.network ? { network: props.network } : {}),
      // Pinned keys are never fetched: no CA to trust for them.
      ...(props.caBundle && !props.jwksFile ? { caBundle: props.caBundle } : {}),
      ...(props.jwksFile ? { bundledFiles: { [PINNED_JWKS_FILE]: props.jwksFile } } : {}),
      environment: {
        JWT_ISSUER: issuer,
        JWT_AUDIENCE: Lazy.string({ produce: () => this.#audiences.join(',') }),
        ...(props.jwksFile ? { [JWKS_FILE_VARIABLE]: PINNED_JWKS_FILE } : { JWKS_URL: props.jwksUrl ?? `${issuer}/.well-known/jwks.json` }),
        ROLES_CLAIM: props.rolesClaim ?? 'cognito:groups',
        ...props.environment,
      },
    });
    this.authorizer = new RequestAuthorizer(this, 'RoleAuthorizer', {
      handler: releaseTarget(
        this,
        'Release',
        this.function,
        props.canary,
        `${props.serviceName ?? 'netconfig'}-release-authorizer`,
        // Requests it could not decide (refused tokens are not counted), as its failures alarm reads them.
        new Metric({
          namespace: DEFAULT_METRICS_NAMESPACE,
          metricName: AUTHORIZER_FAILURES_METRIC,
          dimensionsMap: { Service: props.serviceName ?? 'netconfig' },
          statistic: 'Sum',
          period: Duration.minutes(1),
        }),
      ),
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: props.cacheTtl ?? Duration.minutes(5),
    });
  }

  /** Accepts tokens issued to another client too (the web console's), by its id. */
  acceptAudience(clientId: string): void {
    this.#audiences.push(clientId);
  }
}
