/**
 * Who may call what: a Lambda REQUEST authorizer that verifies JWT bearer tokens against an
 * issuer's JWKS and returns a policy over every route the caller's roles allow. By default
 * the issuer is a Cognito user pool ({@link UserDirectory}, in the stateful stack), with one group per role.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { IdentitySource, RequestAuthorizer } from 'aws-cdk-lib/aws-apigateway';
import { CfnUserPoolGroup, UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { ROLES } from '../../functions/platform/route.js';
import { type FunctionNetwork, ServiceFunction } from './service-function.js';

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
   * Reserved concurrency of the authorizer: every authorized route waits on it, so it keeps
   * instances of its own however many slow relays are running.
   */
  readonly reservedConcurrentExecutions?: number;
  /** Runs the authorizer in these subnets (network.placement "all"). */
  readonly network?: FunctionNetwork;
}

/**
 * The default issuer: a Cognito user pool with one group per role, and the app client whose id
 * is the tokens' audience. Stateful (users, passwords, group memberships): it lives in the
 * stateful stack, retained on removal, under the construct id `Auth` that keeps the logical
 * ids the pool had when it shared one stack with the API.
 */
export class UserDirectory extends Construct {
  readonly userPool: UserPool;
  readonly userPoolClient: UserPoolClient;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const pool = new UserPool(this, 'Users', {
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

export class Auth extends Construct {
  readonly authorizer: RequestAuthorizer;
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: AuthProps) {
    super(scope, id);
    // The region of this stack (the stacks of one deployment share one): no export of the other stack's region.
    const issuer =
      props.issuer ?? (props.directory ? `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${props.directory.userPool.userPoolId}` : undefined);
    const audience = props.issuer ? props.audience : (props.audience ?? props.directory?.userPoolClient.userPoolClientId);
    if (!issuer) throw new Error('auth: an issuer or a user directory is required');
    if (!audience) throw new Error('auth: an audience is required with an external issuer');
    this.function = new ServiceFunction(this, 'Authorizer', {
      handler: 'authorizer/handlers/authorize',
      description: 'Verifies bearer JWTs and returns the policy of the caller’s roles',
      memorySize: 256,
      timeout: Duration.seconds(5),
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
      ...(props.network ? { network: props.network } : {}),
      environment: {
        JWT_ISSUER: issuer,
        JWT_AUDIENCE: audience,
        JWKS_URL: props.jwksUrl ?? `${issuer}/.well-known/jwks.json`,
        ROLES_CLAIM: props.rolesClaim ?? 'cognito:groups',
        ...props.environment,
      },
    });
    this.authorizer = new RequestAuthorizer(this, 'RoleAuthorizer', {
      handler: this.function.function,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: props.cacheTtl ?? Duration.minutes(5),
    });
  }
}
