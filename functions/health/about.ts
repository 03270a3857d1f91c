/**
 * What the service says about itself. The version is the `version` of package.json, inlined
 * by esbuild when the function is bundled: nothing is read from disk at run time, and the
 * answer is the version of the code that is actually deployed.
 */
import packageJson from '../../package.json' with { type: 'json' };
import { optionalEnv } from '../platform/env.js';

export const SERVICE_NAME = optionalEnv('SERVICE_NAME', 'netconfig');
export const SERVICE_VERSION: string = packageJson.version;

/** Health answers must never be served from a cache: they describe this moment. */
export const NO_STORE = { 'Cache-Control': 'no-store' } as const;
