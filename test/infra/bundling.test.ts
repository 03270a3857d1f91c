/**
 * How the functions are bundled (FUNCTION_BUNDLING): the AWS SDK's credential chain is the
 * environment alone, and Node built-ins are obtained as `require()` obtains them. Bundled with
 * the same esbuild options CDK uses, so what is checked here is what deploys.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { build, type Metafile } from 'esbuild';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { esbuildOptionsFor } from '../../tools/local/bundles.js';
import { NODE_BUILTIN_ALIASES, ServiceFunction } from '../../infra/constructs/service-function.js';
import { appContext } from '../../infra/app-context.js';
import { PROJECT_ROOT } from '../../infra/paths.js';

const bundle = async (entry: string): Promise<{ inputs: string[]; code: string }> => {
  const out = await build({ ...esbuildOptionsFor(), entryPoints: [entry], write: false, metafile: true, logLevel: 'silent' });
  return { inputs: Object.keys((out.metafile as Metafile).inputs), code: out.outputFiles[0]!.text };
};

// What the default chain reaches beyond the environment: profiles, SSO, processes, web
// identity, container and instance metadata, and the STS and SSO clients they use.
const CHAIN_BEYOND_ENV =
  /@aws-sdk\/(credential-provider-(node|ini|sso|process|web-identity|http|login)|nested-clients|token-providers)\/|@smithy\/credential-provider-imds\//;

describe('function bundles', () => {
  it.each(['functions/trees/handlers/get.ts', 'functions/relay/handlers/rest-action.ts'])(
    '%s: the SDK takes its credentials from the environment only',
    async (entry) => {
      const { inputs } = await bundle(entry);
      expect(inputs.some((i) => i.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
      expect(inputs.filter((i) => i.includes('@aws-sdk/credential-provider-env/')).length).toBeGreaterThan(0);
      expect(inputs.filter((i) => CHAIN_BEYOND_ENV.test(i))).toEqual([]);
    },
  );

  it('carries the idempotency code only in the functions that honour Idempotency-Key', async () => {
    const own = (inputs: string[]) => inputs.filter((i) => i.startsWith('functions/platform/idempotency'));
    expect(own((await bundle('functions/relay/handlers/rest-action.ts')).inputs)).toHaveLength(2);
    expect(own((await bundle('functions/trees/handlers/get.ts')).inputs)).toEqual([]);
  });

  it('obtains Node built-ins through process.getBuiltinModule, never through an ES import', async () => {
    const { code } = await bundle('functions/relay/handlers/rest-action.ts');
    expect(code).toContain('getBuiltinModule("node:http")');
    const aliased = Object.keys(NODE_BUILTIN_ALIASES).map((arg) => arg.replace(/^--alias:(node:)?/, ''));
    expect(aliased).toEqual(expect.arrayContaining(['http', 'net', 'timers']));
    const imported = [...code.matchAll(/\bfrom\s*["'](?:node:)?([a-z_/]+)["']/g)].map((m) => m[1]);
    expect(imported.filter((name) => aliased.includes(name!))).toEqual([]);
  });
});

describe('the files of the deployment in a bundle (CA bundle, pinned JWKS)', () => {
  it('lands in the asset of a function given one, where NETCONFIG_CA_BUNDLE (relative to the bundle root) names it', () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'netconfig-bundle-'));
    const ca = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures', 'private-ca.pem');
    // Asset metadata (the asset's directory on each function) is what the CDK CLI turns on.
    const app = new App({ outdir, context: { ...appContext(), 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'CaBundle');
    const jwks = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures', 'jwks.json');
    const withCa = new ServiceFunction(stack, 'WithCa', {
      handler: 'health/handlers/status',
      description: 'with the CA bundle and a pinned JWKS',
      caBundle: ca,
      bundledFiles: { 'jwks.json': jwks },
    });
    const without = new ServiceFunction(stack, 'Without', { handler: 'health/handlers/status', description: 'without' });
    app.synth();
    const assetDir = (fn: ServiceFunction) => path.join(outdir, (fn.function.node.defaultChild as CfnFunction).getMetadata('aws:asset:path') as string);
    const env = (fn: ServiceFunction) =>
      (stack.resolve((fn.function.node.defaultChild as CfnFunction).environment) as { variables: Record<string, string> }).variables;
    const relative = env(withCa)['NETCONFIG_CA_BUNDLE']!;
    expect(relative).toBe('ca-bundle.pem');
    // LAMBDA_TASK_ROOT is the asset's root: the function finds exactly the configured file there.
    expect(existsSync(path.join(assetDir(withCa), 'index.mjs'))).toBe(true);
    expect(readFileSync(path.join(assetDir(withCa), relative), 'utf8')).toBe(readFileSync(ca, 'utf8'));
    // Other files of the deployment (the authorizer's pinned JWKS) land beside it, by their own name.
    expect(readFileSync(path.join(assetDir(withCa), 'jwks.json'), 'utf8')).toBe(readFileSync(jwks, 'utf8'));
    expect(existsSync(path.join(assetDir(without), 'jwks.json'))).toBe(false);
    expect(env(without)['NETCONFIG_CA_BUNDLE']).toBeUndefined();
    expect(existsSync(path.join(assetDir(without), 'index.mjs'))).toBe(true);
    expect(existsSync(path.join(assetDir(without), 'ca-bundle.pem'))).toBe(false);
  });
});

describe('the credential provider of the bundles', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("reads the function role's credentials from the environment, as Lambda sets them", async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    vi.stubEnv('AWS_SESSION_TOKEN', 'session');
    const { defaultProvider } = await import('../../infra/build/aws-credentials.mjs');
    await expect(defaultProvider()()).resolves.toMatchObject({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'session' });
  });

  it('fails with the SDK’s own credentials error when the environment has none', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
    const { defaultProvider } = await import('../../infra/build/aws-credentials.mjs');
    await expect(defaultProvider()()).rejects.toMatchObject({ name: 'CredentialsProviderError' });
  });
});
