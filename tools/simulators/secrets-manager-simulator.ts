/**
 * A loopback stand-in for AWS Secrets Manager's JSON protocol, enough for
 * `GetSecretValue` (`X-Amz-Target: secretsmanager.GetSecretValue`). Point the SDK at it with
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER`; the code under test is not told.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsManagerSimulator {
  readonly url: string;
  /** Creates or updates a secret; returns its ARN. */
  set(name: string, value: string): string;
  /** How many GetSecretValue calls were answered, per secret name. */
  readonly reads: Map<string, number>;
  /** The next `count` calls answer 500 InternalServiceError. */
  failNext(count?: number): void;
  close(): Promise<void>;
}

const arnOf = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;

export const startSecretsManagerSimulator = async (): Promise<SecretsManagerSimulator> => {
  const secrets = new Map<string, { value: string; version: string }>();
  const reads = new Map<string, number>();
  let failures = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1', 'x-amzn-RequestId': randomUUID() }).end(text);
      };
      if (req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
        send(400, { __type: 'UnknownOperationException', message: 'unsupported operation' });
        return;
      }
      if (failures > 0) {
        failures -= 1;
        send(500, { __type: 'InternalServiceError', message: 'simulated failure' });
        return;
      }
      let id: unknown;
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: unknown }).SecretId;
      } catch {
        id = undefined;
      }
      const name = typeof id === 'string' ? [...secrets.keys()].find((n) => n === id || arnOf(n) === id) : undefined;
      const secret = name ? secrets.get(name) : undefined;
      if (!name || !secret) {
        send(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
        return;
      }
      reads.set(name, (reads.get(name) ?? 0) + 1);
      send(200, {
        ARN: arnOf(name),
        Name: name,
        SecretString: secret.value,
        VersionId: secret.version,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    reads,
    set: (name, value) => {
      secrets.set(name, { value, version: randomUUID() });
      return arnOf(name);
    },
    failNext: (count = 1) => {
      failures = count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
