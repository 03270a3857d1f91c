/**
 * Turning a `$VAULT_` reference into its value, and the warm-container cache around it.
 * A reference resolves to a non-empty string or fails with a typed error: never to an empty
 * value, and never to the stored text itself.
 */
import type { SecretsBackend } from './backend.js';
import { SecretMissing, SecretReferenceInvalid } from './errors.js';
import { ENC_REMOVED, VAULT_PREFIX, formatReference, isEncValue, parseReference } from './reference.js';

/** Resolves a `$VAULT_` reference to its secret value at call time. */
export interface SecretResolver {
  resolve(reference: string): Promise<string>;
}

/**
 * Reads the value a reference points at, with no cache. Throws {@link SecretReferenceInvalid}
 * for `$ENC` or anything that is not a well-formed reference, {@link SecretMissing} when the
 * secret or its key is absent or empty, {@link SecretsUnavailable} when the store is down.
 */
export const readReference = async (backend: SecretsBackend, reference: string): Promise<string> => {
  if (isEncValue(reference)) {
    throw new SecretReferenceInvalid(`The configuration holds a $ENC value. ${ENC_REMOVED}.`);
  }
  const parsed = parseReference(reference);
  if (typeof parsed === 'string') {
    // The value is not echoed: a malformed reference may well be a password typed in its place.
    throw new SecretReferenceInvalid(
      `The configuration holds a secret that is not a valid ${VAULT_PREFIX} reference (${parsed}); replace it with "${VAULT_PREFIX}<path>#<key>".`,
    );
  }
  const canonical = formatReference(parsed);
  const data = await backend.read(parsed.path);
  if (!data) throw new SecretMissing(canonical);
  if (!Object.hasOwn(data, parsed.key)) throw new SecretMissing(canonical, `has no key "${parsed.key}"`);
  const value = data[parsed.key];
  if (typeof value !== 'string' || value === '') throw new SecretMissing(canonical, 'is empty or not a string');
  return value;
};

export interface SecretResolverOptions {
  readonly backend: SecretsBackend;
  /** How long a resolved value is reused in this container; 0 disables the cache. Default 60 s. */
  readonly ttlMs?: number;
  /** Most references kept at once (the oldest go first). Default 500. */
  readonly maxEntries?: number;
  /** The clock; default `Date.now`, read at each call (so a pinned `Date` applies to it). */
  readonly now?: () => number;
}

/** A resolver whose cache can be cleared, e.g. after the orchestrator refused the credential. */
export interface CachingSecretResolver extends SecretResolver {
  /** Drops one reference from the cache, or all of them. */
  forget(reference?: string): void;
}

interface Entry {
  readonly value: Promise<string>;
  expiresAt: number;
}

/**
 * Resolves references through `backend`, caching each value for `ttlMs`. Concurrent calls for
 * one reference share a single read; failures are not cached.
 */
export const createSecretResolver = (options: SecretResolverOptions): CachingSecretResolver => {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 500;
  const now = options.now ?? (() => Date.now());
  const cache = new Map<string, Entry>();

  return {
    resolve(reference: string): Promise<string> {
      const hit = cache.get(reference);
      if (hit && hit.expiresAt > now()) return hit.value;
      // Mutation: → `if (true)` is equivalent: deleting a reference the cache does not hold changes nothing.
      if (hit) cache.delete(reference);
      const value = readReference(options.backend, reference);
      const entry: Entry = { value, expiresAt: Infinity };
      cache.set(reference, entry);
      while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
      value.then(
        () => {
          if (ttlMs <= 0 && cache.get(reference) === entry) cache.delete(reference);
          else entry.expiresAt = now() + ttlMs;
        },
        () => {
          if (cache.get(reference) === entry) cache.delete(reference);
        },
      );
      return value;
    },
    forget(reference?: string): void {
      if (reference === undefined) cache.clear();
      else cache.delete(reference);
    },
  };
};
