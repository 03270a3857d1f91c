/** The container's dependencies of the application health routes, created on first use. */
import { createProfileStore } from '../runtime/profile-store.js';
import { secretsBackend } from '../outbound/secrets/resolver.js';
import { documentClient } from '../platform/dynamo.js';
import { integerEnv } from '../platform/env.js';
import type { ApplicationHealthDeps } from './application-health.js';

/** `HEALTH_CHECK_TIMEOUT_MS` (default 2000), as for `/health/system`. */
const TIMEOUT_MS = integerEnv('HEALTH_CHECK_TIMEOUT_MS', 2_000, 50, 10_000);
let deps: ApplicationHealthDeps | undefined;

export const applicationHealthDeps = (): ApplicationHealthDeps => {
  if (!deps) {
    const store = createProfileStore();
    deps = { runtime: () => store.runtime(), client: documentClient, secrets: secretsBackend, timeoutMs: TIMEOUT_MS };
  }
  return deps;
};
