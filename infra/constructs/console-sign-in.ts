/**
 * How the deployed web console signs in (docs/console.md): OIDC authorization code with PKCE,
 * as a public client. With the Cognito pool the stack makes the hosted-UI domain and the
 * console's own app client; with an external provider the config names them.
 */
import { Duration } from 'aws-cdk-lib';
import { OAuthScope, UserPoolClient, UserPoolClientIdentityProvider, UserPoolDomain, type IUserPool } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import type { ConsoleConfig } from '../../functions/console/model.js';
import type { ConsoleSettings } from '../config.js';

export interface CognitoConsoleSignInProps {
  readonly userPool: IUserPool;
  /** The hosted-UI domain: `https://<prefix>.auth.<region>.amazoncognito.com`. */
  readonly domainPrefix: string;
  /** Every address the console is opened at (`<API URL>/console` first): its redirect URIs, exactly. */
  readonly callbackUrls: readonly string[];
  readonly scopes: readonly string[];
}

/** The console's client lifetimes: an ID token for an hour (refreshed before it ends), a session of a working day. */
const ID_TOKEN_VALIDITY = Duration.hours(1);
const REFRESH_TOKEN_VALIDITY = Duration.hours(12);

/**
 * The Cognito side: the user pool's hosted-UI domain and an app client for the console (code
 * grant only, no secret, its callbacks the console's own URLs, so no redirect elsewhere). Both are
 * stateless: they live with the API, not in the stateful stack, and a replaced client only
 * makes signed-in consoles sign in again.
 */
export class CognitoConsoleSignIn extends Construct {
  readonly config: ConsoleConfig;

  constructor(scope: Construct, id: string, props: CognitoConsoleSignInProps) {
    super(scope, id);
    const domain = new UserPoolDomain(this, 'Domain', { userPool: props.userPool, cognitoDomain: { domainPrefix: props.domainPrefix } });
    const client = new UserPoolClient(this, 'Client', {
      userPool: props.userPool,
      generateSecret: false,
      preventUserExistenceErrors: true,
      // Sign-in happens on the hosted UI: no password or SRP flow for this client; refresh is always allowed.
      authFlows: { custom: false, user: false, userPassword: false, userSrp: false },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      oAuth: {
        flows: { authorizationCodeGrant: true, implicitCodeGrant: false, clientCredentials: false },
        scopes: props.scopes.map((s) => OAuthScope.custom(s)),
        callbackUrls: [...props.callbackUrls],
        logoutUrls: [...props.callbackUrls],
      },
      idTokenValidity: ID_TOKEN_VALIDITY,
      accessTokenValidity: ID_TOKEN_VALIDITY,
      refreshTokenValidity: REFRESH_TOKEN_VALIDITY,
      enableTokenRevocation: true,
    });
    const base = domain.baseUrl();
    this.config = {
      authorizationEndpoint: `${base}/oauth2/authorize`,
      tokenEndpoint: `${base}/oauth2/token`,
      // Cognito's sign-out takes `client_id` and `logout_uri` (one of the client's logout URLs).
      endSessionEndpoint: `${base}/logout`,
      clientId: client.userPoolClientId,
      scopes: props.scopes,
      rolesClaim: 'cognito:groups',
    };
  }
}

/** The external provider's side: what the config names (`console.clientId` and the endpoints; checked by `infra/config.ts`). */
export const oidcConsoleSignIn = (settings: ConsoleSettings, rolesClaim: string): ConsoleConfig => ({
  authorizationEndpoint: settings.authorizationEndpoint!,
  tokenEndpoint: settings.tokenEndpoint!,
  clientId: settings.clientId!,
  scopes: settings.scopes,
  rolesClaim,
  ...(settings.endSessionEndpoint ? { endSessionEndpoint: settings.endSessionEndpoint } : {}),
});
