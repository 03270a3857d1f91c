/**
 * The service's own credential for Vault (a token, or an AppRole secret id), kept in AWS
 * Secrets Manager and never in a plain environment value. Read once per container and
 * re-read on demand (after Vault refused it: it may have been rotated).
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { logger } from '../../platform/logger.js';
import { SecretsUnavailable } from './errors.js';

/** Gives the credential; `refresh` forces a fresh read instead of the cached one. */
export type CredentialSource = (options?: { refresh?: boolean }) => Promise<string>;

/** A fixed credential (tests, or a caller that obtained it elsewhere). */
export const staticCredential =
  (value: string): CredentialSource =>
  () =>
    Promise.resolve(value);

/**
 * Reads the credential from the Secrets Manager secret `secretId` (name or ARN). The secret's
 * `SecretString` is the token or secret id itself (surrounding whitespace ignored). The SDK
 * honours `AWS_ENDPOINT_URL_SECRETS_MANAGER`, so no code branches on where it runs.
 */
export const secretsManagerCredential = (
  secretId: string,
  client: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({ maxAttempts: 2 }),
): CredentialSource => {
  let cached: Promise<string> | undefined;
  const load = async (): Promise<string> => {
    let value: string | undefined;
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      value = out.SecretString?.trim();
    } catch (error) {
      // Only the HTTP status is logged: error names and messages of the SDK can carry ARNs
      // and request details that do not belong in a log line.
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      logger.error('could not read the Vault credential from Secrets Manager', { status: status ?? 'no answer' });
      throw new SecretsUnavailable();
    }
    if (!value) {
      logger.error('the Vault credential in Secrets Manager is empty; set its value', {});
      throw new SecretsUnavailable();
    }
    return value;
  };
  return ({ refresh = false } = {}) => {
    if (refresh || !cached) {
      const attempt = load();
      cached = attempt;
      // A failed read is not cached: the next call tries again.
      attempt.catch(() => {
        if (cached === attempt) cached = undefined;
      });
    }
    return cached;
  };
};
