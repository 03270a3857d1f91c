/**
 * The emulator's start (tools/local/dynamodb-local.ts) counts only DynamoDB's own answer: a
 * server that holds the port first is never taken for the emulator.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../tools/local/dynamodb-local.js';

let squatter: ReturnType<typeof createServer>;
let port: number;

beforeAll(async () => {
  // Another service on the port, answering every request as a non-DynamoDB server would.
  squatter = createServer((_req, res) => res.writeHead(404).end('{"message":"not found"}'));
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  port = (squatter.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

describe('starting DynamoDB Local', () => {
  it('is not fooled by another server on its port: the JVM cannot bind it, and the start says so', async () => {
    // The JVM exits on the bind (or, on a starved machine, has not answered within the deadline): either way, no start.
    await expect(startDynamoDbLocal({ port })).rejects.toThrow(/is port \d+ taken\?|did not start within/);
  });

  it('on a port of its own choosing, answers ListTables', async () => {
    const dynamo = await startDynamoDbLocal();
    try {
      expect(Number(new URL(dynamo.endpoint).port)).not.toBe(port);
      const res = await fetch(dynamo.endpoint, {
        method: 'POST',
        headers: {
          'X-Amz-Target': 'DynamoDB_20120810.ListTables',
          'Content-Type': 'application/x-amz-json-1.0',
          Authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x',
        },
        body: '{}',
      });
      expect(await res.json()).toEqual({ TableNames: [] });
    } finally {
      await dynamo.stop();
    }
  });
});
