/**
 * The key of the idempotency fingerprints: a per-stack secret, so that what the idempotency
 * table keeps (an HMAC of each keyed request, which may carry a password) cannot be checked
 * against guesses by anyone who reads the table but not the key.
 *
 * - Deployed: `IDEMPOTENCY_KEY_SECRET` names a Secrets Manager secret the stack creates with a
 *   random value. It is read once per container, at the first request that carries an
 *   `Idempotency-Key` (requests without one never pay for it); a failed read is not kept.
 * - Local mode and tests: `IDEMPOTENCY_KEY_FILE`, a file in the local stack's data directory,
 *   created with a random key by whichever function needs it first.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { logger } from './logger.js';
import { InternalError, ServiceUnavailable } from './problem.js';

/** Gives the fingerprint key (at least 32 bytes). */
export type FingerprintKeySource = () => Promise<Uint8Array>;

/** Shortest key accepted: HMAC-SHA-256 gains nothing from more than its 32-byte block of entropy. */
const MIN_KEY_BYTES = 32;

const checked = (key: Uint8Array, where: string): Uint8Array => {
  if (key.length < MIN_KEY_BYTES) throw new InternalError(`the idempotency fingerprint key in ${where} is shorter than ${MIN_KEY_BYTES} bytes`);
  return key;
};

/** Reads the key file, creating it first (atomically: a link never overwrites) when it is absent. */
const fileKey = (file: string): Uint8Array => {
  try {
    return checked(readFileSync(file), file);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(MIN_KEY_BYTES), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    // Another function created it first: use theirs.
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return checked(readFileSync(file), file);
};

/** Reads the Secrets Manager secret's `SecretString` (its UTF-8 bytes are the key). */
const secretKey = async (secretId: string): Promise<Uint8Array> => {
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  let value: string | undefined;
  try {
    const out = await new SecretsManagerClient({ maxAttempts: 2 }).send(new GetSecretValueCommand({ SecretId: secretId }));
    value = out.SecretString;
  } catch (error) {
    // Only the status: SDK messages can carry ARNs.
    logger.warn('could not read the idempotency fingerprint key from Secrets Manager', {
      status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 'no answer',
    });
    throw new ServiceUnavailable('The idempotency key store is unavailable at the moment; retry with the same key shortly.');
  }
  return checked(Buffer.from(value ?? '', 'utf8'), 'IDEMPOTENCY_KEY_SECRET');
};

/** The key source the environment configures, cached once it has given a key. */
export const environmentFingerprintKey = (): FingerprintKeySource => {
  let cached: Promise<Uint8Array> | undefined;
  return () => {
    if (!cached) {
      const secretId = process.env['IDEMPOTENCY_KEY_SECRET'];
      const file = process.env['IDEMPOTENCY_KEY_FILE'];
      const attempt = secretId
        ? secretKey(secretId)
        : file
          ? Promise.resolve().then(() => fileKey(file))
          : Promise.reject(new InternalError('configuration error: IDEMPOTENCY_KEY_SECRET or IDEMPOTENCY_KEY_FILE is required for Idempotency-Key'));
      cached = attempt;
      attempt.catch(() => {
        if (cached === attempt) cached = undefined;
      });
    }
    return cached;
  };
};
