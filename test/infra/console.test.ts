/**
 * The web console in the stacks: its three public routes and their bundle, the API's response
 * compression, and its sign-in: with Cognito a hosted-UI domain and an app client of its own
 * (code grant, no secret, callbacks the console's URLs) whose id the authorizer accepts; with an
 * external provider the client the config names; off when asked. And the config's checks.
 */
import { App } from 'aws-cdk-lib';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeployConfigError, parseDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { checkNag, logicalIdOf, nagFindings, NO_BUNDLING, serviceTemplate } from './service-template.js';

type Resource = { Type: string; Properties: Record<string, any> };
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures');
const CONSOLE_OPS = ['getConsole', 'getConsoleAsset', 'getConsoleConfig'];

const raw = (config: Record<string, unknown>) => ({ stackName: 'Netconfig', vault: { address: 'https://vault.example.net:8200' }, ...config });

const synth = (config: Record<string, unknown>, nag = false) => {
  const { stackName, ...settings } = parseDeployConfig(raw(config), 'variant.json', FIXTURES);
  const service = new NetconfigService(new App({ context: NO_BUNDLING }), stackName, { settings });
  if (nag) checkNag(service);
  const template = serviceTemplate(service);
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const env = (op: string): Record<string, unknown> => resources[logicalIdOf(service.functions[op]!.function)]!.Properties['Environment']['Variables'];
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  return { service, template, resources, env, ofType };
};

const problemsOf = (config: Record<string, unknown>): readonly string[] => {
  try {
    parseDeployConfig(raw(config), 'variant.json', FIXTURES);
    return [];
  } catch (error) {
    if (error instanceof DeployConfigError) return error.problems;
    throw error;
  }
};

const OIDC = { provider: 'oidc', issuer: 'https://login.example.net/realms/ops', audience: 'netconfig', jwksUrl: 'https://login.example.net/realms/ops/certs' };
const OIDC_CONSOLE = {
  clientId: 'netconfig-console',
  authorizationEndpoint: 'https://login.example.net/realms/ops/protocol/openid-connect/auth',
  tokenEndpoint: 'https://login.example.net/realms/ops/protocol/openid-connect/token',
};

describe('the console with the Cognito user pool (the default)', () => {
  const { service, env, ofType } = synth({ console: { domainPrefix: 'netconfig-ops', urls: ['https://netconfig.example.net/v1/console'] } }, true);

  it('serves three public GET routes from functions that ship the built console and its sign-in settings', () => {
    const methods = ofType('AWS::ApiGateway::Method').filter(([, m]) => CONSOLE_OPS.includes(m.Properties['OperationName']));
    expect(methods.map(([, m]) => [m.Properties['OperationName'], m.Properties['HttpMethod'], m.Properties['AuthorizationType']]).sort()).toEqual(
      CONSOLE_OPS.map((op) => [op, 'GET', 'NONE']),
    );
    for (const op of CONSOLE_OPS) {
      expect(env(op)).toMatchObject({
        CONSOLE_FILES: 'console',
        ROUTE_ROLES: 'public',
        CONSOLE_SCOPES: 'openid email profile',
        CONSOLE_ROLES_CLAIM: 'cognito:groups',
      });
    }
    const endpoints = JSON.stringify([env('getConsoleConfig')['CONSOLE_AUTHORIZATION_ENDPOINT'], env('getConsoleConfig')['CONSOLE_TOKEN_ENDPOINT']]);
    expect(endpoints).toContain('/oauth2/authorize');
    expect(endpoints).toContain('/oauth2/token');
  });

  it('compresses answers of 1 KiB and more', () => {
    const [[, api]] = ofType('AWS::ApiGateway::RestApi') as [[string, Resource]];
    expect(api.Properties['MinimumCompressionSize']).toBe(1024);
  });

  it('makes the hosted-UI domain and a public code-grant client whose callbacks are the console’s URLs', () => {
    const domains = ofType('AWS::Cognito::UserPoolDomain');
    expect(domains.map(([, d]) => d.Properties['Domain'])).toEqual(['netconfig-ops']);
    const clients = ofType('AWS::Cognito::UserPoolClient').filter(([, c]) => c.Properties['AllowedOAuthFlowsUserPoolClient'] === true);
    expect(clients).toHaveLength(1);
    const [[clientId, client]] = clients as [[string, Resource]];
    expect(client.Properties).toMatchObject({
      AllowedOAuthFlows: ['code'],
      AllowedOAuthScopes: ['openid', 'email', 'profile'],
      GenerateSecret: false,
      SupportedIdentityProviders: ['COGNITO'],
      PreventUserExistenceErrors: 'ENABLED',
    });
    const callbacks = JSON.stringify(client.Properties['CallbackURLs']);
    expect(callbacks).toContain('.execute-api.');
    expect(callbacks).toContain('/v1/console');
    expect(client.Properties['CallbackURLs']).toContain('https://netconfig.example.net/v1/console');
    expect(client.Properties['CallbackURLs']).toHaveLength(2);
    expect(client.Properties['LogoutURLs']).toEqual(client.Properties['CallbackURLs']);
    // The console's functions name this client; the authorizer accepts it beside the API's client.
    expect(env('getConsoleConfig')['CONSOLE_CLIENT_ID']).toEqual({ Ref: clientId });
    const audience = JSON.stringify(env('authorizer')['JWT_AUDIENCE']);
    expect(audience).toContain(clientId);
    expect(audience).toMatch(/UserPoolClient|Client/);
  });

  it('passes cdk-nag', () => {
    expect(nagFindings(service)).toEqual([]);
  });
});

describe('the console with an external OIDC provider', () => {
  it('takes the client and endpoints of the config, and the authorizer accepts that client', () => {
    const { env, ofType } = synth({ identity: { ...OIDC, rolesClaim: 'groups' }, console: { ...OIDC_CONSOLE, scopes: ['openid', 'roles'] } });
    expect(ofType('AWS::Cognito::UserPoolDomain')).toEqual([]);
    expect(env('getConsoleConfig')).toMatchObject({
      CONSOLE_CLIENT_ID: 'netconfig-console',
      CONSOLE_AUTHORIZATION_ENDPOINT: OIDC_CONSOLE.authorizationEndpoint,
      CONSOLE_TOKEN_ENDPOINT: OIDC_CONSOLE.tokenEndpoint,
      CONSOLE_SCOPES: 'openid roles',
      CONSOLE_ROLES_CLAIM: 'groups',
    });
    expect(env('authorizer')['JWT_AUDIENCE']).toBe('netconfig,netconfig-console');
  });

  it('leaves the console out of a config that names no console client (as before the console existed)', () => {
    const { service, env } = synth({ identity: OIDC });
    for (const op of CONSOLE_OPS) expect(service.functions[op], op).toBeUndefined();
    expect(env('authorizer')['JWT_AUDIENCE']).toBe('netconfig');
  });
});

describe('console.enabled false', () => {
  it('leaves out the routes, the domain and the console client', () => {
    const { service, ofType, env } = synth({ console: { enabled: false } });
    for (const op of CONSOLE_OPS) expect(service.functions[op], op).toBeUndefined();
    expect(ofType('AWS::Cognito::UserPoolDomain')).toEqual([]);
    expect(ofType('AWS::Cognito::UserPoolClient').filter(([, c]) => c.Properties['AllowedOAuthFlowsUserPoolClient'] === true)).toEqual([]);
    expect(JSON.stringify(env('authorizer')['JWT_AUDIENCE'])).not.toContain('ConsoleSignIn');
  });
});

describe('console keys in the config', () => {
  it('accepts the defaults and a full OIDC console', () => {
    expect(problemsOf({})).toEqual([]);
    expect(problemsOf({ identity: OIDC, console: { ...OIDC_CONSOLE, endSessionEndpoint: 'https://login.example.net/logout' } })).toEqual([]);
  });

  it.each([
    [{ console: { clientId: 'x' } }, 'console.clientId: only used with identity.provider "oidc" (with Cognito the stack makes the console\'s client)'],
    [{ console: { domainPrefix: 'my-aws-console' } }, 'console.domainPrefix: "my-aws-console" holds "aws", which Cognito refuses in a domain prefix'],
    [
      { console: { domainPrefix: 'Upper' } },
      'console.domainPrefix: must be 1 to 63 lower-case letters, digits and hyphens, not starting or ending with a hyphen, got "Upper"',
    ],
    [
      { stackName: 'NetconfigAws' },
      'console.domainPrefix: required here: the default, "netconfig-aws-<account id>", is not a prefix Cognito takes (it holds "aws")',
    ],
    [
      { identity: OIDC, console: { enabled: true } },
      'console.clientId: required for the console with identity.provider "oidc" (or set console.enabled to false)',
    ],
    [
      { identity: OIDC, console: { clientId: 'c' } },
      'console.tokenEndpoint: required for the console with identity.provider "oidc" (or set console.enabled to false)',
    ],
    [
      { identity: OIDC, console: { ...OIDC_CONSOLE, domainPrefix: 'x' } },
      'console.domainPrefix: only used with identity.provider "cognito" (the hosted-UI domain)',
    ],
    [{ console: { enabled: false, urls: ['https://a.example.net/console'] } }, 'console.urls: only used while the console is on (console.enabled is false)'],
    [{ console: { scopes: ['email'] } }, 'console.scopes: must include "openid" (the console signs in with the ID token)'],
    [{ console: { urls: ['https://a.example.net/v1'] } }, 'console.urls[0]: must be an https:// URL ending in /console, got "https://a.example.net/v1"'],
    [
      { identity: OIDC, console: { ...OIDC_CONSOLE, tokenEndpoint: 'http://idp/token' } },
      'console.tokenEndpoint: must be an https:// URL without query or fragment, got "http://idp/token"',
    ],
  ])('names the key: %j', (config, problem) => {
    expect(problemsOf(config)).toContain(problem);
  });
});
