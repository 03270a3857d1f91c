/**
 * The container's secrets backend and resolver, configured once from the environment (see
 * `environment.ts`); a function that lacks the configuration fails at load with a clear message.
 *
 * ```ts
 * import { secretResolver } from './resolver.js';
 * const password = await secretResolver.resolve(adapter.auth.password); // '$VAULT_…'
 * ```
 * `resolve` throws `SecretsUnavailable` (503), `SecretMissing` (500, `secret-missing`) or
 * `SecretReferenceInvalid` (500, `secret-reference-invalid`, e.g. a `$ENC` value); all three
 * are problems the HTTP middleware renders as they are.
 */
import type { SecretsBackend } from './backend.js';
import { backendFromEnv, cacheTtlFromEnv } from './environment.js';
import { createSecretResolver, type CachingSecretResolver } from './resolve.js';

export { createSecretResolver, readReference, type CachingSecretResolver, type SecretResolverOptions } from './resolve.js';
export { SecretMissing, SecretReferenceInvalid, SecretsUnavailable } from './errors.js';

/** The configured store (writes refused unless `SECRETS_ACCESS=write`). */
export const secretsBackend: SecretsBackend = backendFromEnv();

/** Resolves `$VAULT_` references through {@link secretsBackend}, cached for `SECRETS_CACHE_TTL_SECONDS`. */
export const secretResolver: CachingSecretResolver = createSecretResolver({ backend: secretsBackend, ttlMs: cacheTtlFromEnv() });
