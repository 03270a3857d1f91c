/**
 * The service's own credential for Vault (a token, or an AppRole secret id), kept in AWS
 * Secrets Manager and never in a plain environment value. Read once per container and
 * re-read on demand (after Vault refused it: it may have been rotated).
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { logger } from '../../platform/logger.js';
import { SecretsUnavailable } from './errors.js';

/**
 * The value the stack gives a Vault credential secret it creates (infra/constructs/secrets.ts):
 * CloudFormation cannot create a secret without a value, and a generated random one would be
 * sent to Vault as if it were a token. A function that reads it answers 503 saying the
 * credential is not set, and never calls Vault with it.
 */
export const UNSET_CREDENTIAL = 'UNSET: put the Vault token or AppRole secret_id here (docs/deployment.md, "Vault credentials")';

/** What a caller is told while the credential is unset (or empty): nothing about the secret but that. */
export const UNSET_DETAIL = 'The secrets store cannot be used: the service’s Vault credential has not been set yet (docs/deployment.md, "Vault credentials").';

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
      throw new SecretsUnavailable(UNSET_DETAIL);
    }
    if (value === UNSET_CREDENTIAL) {
      logger.error('the Vault credential in Secrets Manager is still the placeholder the stack created; set its value', {});
      throw new SecretsUnavailable(UNSET_DETAIL);
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
