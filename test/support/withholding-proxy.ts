/**
 * A loopback proxy in front of DynamoDB Local that can make a write's outcome unknown: it
 * forwards the next request of a chosen operation, lets DynamoDB apply it, and never answers
 * the client. The SDK times out and resends; what the resend meets is the write's own first
 * attempt.
 */
import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WithholdingProxy {
  /** The endpoint to give the SDK (`AWS_ENDPOINT_URL_DYNAMODB`). */
  readonly endpoint: string;
  /** Lands the next request of `operation` (e.g. `PutItem`) and withholds its answer. */
  withholdNext(operation: string): void;
  /** How many answers were withheld so far. */
  readonly withheld: number;
  close(): Promise<void>;
}

/**
 * Sends `req` (with its `body`) on to `upstream` and pipes the answer to `res`; with `landed`,
 * lets DynamoDB apply the request but drops its answer and calls `landed` instead.
 */
export const forwardTo = (upstream: URL, req: IncomingMessage, body: Buffer, res: ServerResponse, landed?: () => void): void => {
  const out = forward({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
    if (landed) {
      answer.resume();
      landed();
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.end(body);
};

/** Starts a proxy to `upstream` (the DynamoDB Local endpoint) on a free loopback port. */
export const startWithholdingProxy = async (upstream: string): Promise<WithholdingProxy> => {
  const target = new URL(upstream);
  const pending = new Set<string>();
  const held: ServerResponse[] = [];
  const relay = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const operation = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
      const withhold = pending.delete(operation);
      forwardTo(target, req, Buffer.concat(chunks), res, withhold ? () => held.push(res) : undefined);
    });
  };
  const server: Server = createServer(relay);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    withholdNext: (operation) => void pending.add(operation),
    get withheld() {
      return held.length;
    },
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};
