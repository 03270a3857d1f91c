/**
 * Who may call what: a Lambda REQUEST authorizer that verifies JWT bearer tokens against an
 * issuer's JWKS and returns a policy over every route the caller's roles allow. By default
 * the issuer is a Cognito user pool created here, with one group per role.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { IdentitySource, RequestAuthorizer } from 'aws-cdk-lib/aws-apigateway';
import { CfnUserPoolGroup, UserPool, UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { ROLES } from '../../functions/platform/route.js';
import { ServiceFunction } from './service-function.js';

export interface AuthProps {
  /** An external issuer; when set, no user pool is created. */
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
}

export class Auth extends Construct {
  readonly authorizer: RequestAuthorizer;
  readonly function: ServiceFunction;
  readonly userPool?: UserPool;
  /** The app client whose id is the tokens' audience (only with the default user pool). */
  readonly userPoolClient?: UserPoolClient;

  constructor(scope: Construct, id: string, props: AuthProps) {
    super(scope, id);
    let issuer = props.issuer;
    let audience = props.audience;
    if (!issuer) {
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
      for (const role of ROLES) new CfnUserPoolGroup(this, `Group-${role}`, { userPoolId: pool.userPoolId, groupName: role });
      issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${pool.userPoolId}`;
      audience ??= client.userPoolClientId;
      this.userPool = pool;
      this.userPoolClient = client;
    }
    if (!audience) throw new Error('auth: an audience is required with an external issuer');
    this.function = new ServiceFunction(this, 'Authorizer', {
      handler: 'authorizer/handlers/authorize',
      description: 'Verifies bearer JWTs and returns the policy of the caller’s roles',
      memorySize: 256,
      timeout: Duration.seconds(5),
      ...(props.reservedConcurrentExecutions !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions } : {}),
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
