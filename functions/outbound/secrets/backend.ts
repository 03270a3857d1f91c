/**
 * A secrets store, seen from the service: key/value data at a path. Implemented by HashiCorp
 * Vault KV v2 ({@link ./vault.ts}) and by the embedded file store of local mode ({@link ./local.ts}).
 */

/** The data of one secret: key → value. */
export type SecretData = Readonly<Record<string, unknown>>;

export interface SecretsBackend {
  /** Which store this is, for logs and health checks. */
  readonly kind: 'vault' | 'local';
  /**
   * The current data at `path`; undefined when there is none (never written, deleted,
   * destroyed). Throws {@link SecretsUnavailable} when the store cannot answer.
   */
  read(path: string): Promise<SecretData | undefined>;
  /** Replaces the data at `path` (a new version in Vault). */
  write(path: string, data: Readonly<Record<string, string>>): Promise<void>;
  /** Deletes the data at `path` (in Vault, soft-deletes the latest version: it can be undeleted). */
  delete(path: string): Promise<void>;
  /** Resolves when the store answers; throws {@link SecretsUnavailable} otherwise. */
  health(): Promise<void>;
}

export type SecretsAccess = 'read' | 'write';

/**
 * Refuses writes and deletes for functions that were granted read access only, so that a
 * mistake in a read-only function cannot change a secret even if its credentials could.
 */
export const withAccess = (backend: SecretsBackend, access: SecretsAccess): SecretsBackend =>
  access === 'write'
    ? backend
    : {
        kind: backend.kind,
        read: (path) => backend.read(path),
        health: () => backend.health(),
        write: () => Promise.reject(new Error('configuration error: this function has read-only access to the secrets store (SECRETS_ACCESS=read)')),
        delete: () => Promise.reject(new Error('configuration error: this function has read-only access to the secrets store (SECRETS_ACCESS=read)')),
      };
