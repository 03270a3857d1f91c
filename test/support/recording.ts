/**
 * Records HTTP exchanges with an API as a client sees them (method, concrete path, status,
 * content type, body), for checking every answer of an end-to-end run against openapi.json
 * (see test/support/openapi-conformance.ts).
 *
 * Two recorders: a proxy in front of the API, which also sees what child processes (curl in
 * the documentation walkthroughs, `npm run smoke`) send, and {@link recordingFetch} for calls
 * that must reach the API directly.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  readonly method: string;
  /** Path and query as sent, e.g. `/v1/adapters/lab-nso?x=1`. */
  readonly path: string;
  readonly status: number;
  /** The Content-Type header as answered, if any. */
  readonly contentType: string | undefined;
  readonly body: string;
  /** The `x-amzn-RequestId` the gateway answered, to match its access log. */
  readonly requestId: string | undefined;
  /** Every answered header, by lower-case name (repeated ones joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];

const withoutHopByHop = (headers: IncomingHttpHeaders): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name.toLowerCase())));

const header = (headers: IncomingHttpHeaders | Headers, name: string): string | undefined => {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** Headers as a plain map of lower-case names. */
export const headerMap = (headers: IncomingHttpHeaders | Headers): Record<string, string> =>
  headers instanceof Headers
    ? Object.fromEntries([...headers.entries()])
    : Object.fromEntries(Object.keys(headers).map((name) => [name.toLowerCase(), header(headers, name)!]));

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: send requests here instead of to the target. */
  readonly origin: string;
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on 127.0.0.1 that forwards every request to `target` (an origin) unchanged
 * but for `Host`, answers what the target answered, and records the exchange. A request the
 * target does not answer is recorded with status 0 and answered 502.
 */
export const startRecordingProxy = async (target: string): Promise<RecordingProxy> => {
  const exchanges: Exchange[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const headers = { ...withoutHopByHop(req.headers), host: new URL(target).host, ...(body.length ? { 'content-length': String(body.length) } : {}) };
      let answered = false;
      const upstream = request(new URL(path, target), { method, headers }, (up) => {
        const parts: Buffer[] = [];
        up.on('data', (c: Buffer) => parts.push(c));
        up.on('end', () => {
          answered = true;
          const answer = Buffer.concat(parts);
          exchanges.push({
            method,
            path,
            status: up.statusCode ?? 0,
            contentType: header(up.headers, 'content-type'),
            body: answer.toString('utf8'),
            requestId: header(up.headers, 'x-amzn-requestid'),
            headers: headerMap(up.headers),
          });
          res.writeHead(up.statusCode ?? 502, { ...withoutHopByHop(up.headers), 'content-length': String(answer.length) });
          res.end(answer);
        });
      });
      upstream.on('error', (error) => {
        // The target may close the connection after answering (an oversized body): that answer stands.
        if (answered) return;
        answered = true;
        exchanges.push({ method, path, status: 0, contentType: undefined, body: `no answer: ${error.message}`, requestId: undefined, headers: {} });
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`recording proxy: ${error.message}`);
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** `fetch`, recording each exchange in `exchanges` (the body is read once here and handed on). */
export const recordingFetch =
  (exchanges: Exchange[]) =>
  async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const res = await fetch(url, init);
    const body = Buffer.from(await res.arrayBuffer());
    exchanges.push({
      method: (init?.method ?? 'GET').toUpperCase(),
      path: `${url.pathname}${url.search}`,
      status: res.status,
      contentType: header(res.headers, 'content-type'),
      body: body.toString('utf8'),
      requestId: header(res.headers, 'x-amzn-requestid'),
      headers: headerMap(res.headers),
    });
    // A null-body status (204, 304) takes no body, not even an empty one.
    return new Response([101, 204, 205, 304].includes(res.status) ? null : body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

/** Records a whole raw HTTP/1.1 answer (status line, headers, body) read from a socket. */
export const recordRawAnswer = (exchanges: Exchange[], method: string, path: string, answer: string): void => {
  const split = answer.indexOf('\r\n\r\n');
  const head = split < 0 ? answer : answer.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const fields = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  exchanges.push({
    method,
    path,
    status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1] ?? 0),
    contentType: fields.get('content-type'),
    body: split < 0 ? '' : answer.slice(split + 4),
    requestId: fields.get('x-amzn-requestid'),
    headers: Object.fromEntries(fields),
  });
};

export interface AccessLogEntry {
  readonly requestId: string;
  readonly httpMethod?: string;
  readonly path?: string;
  readonly status: number;
  /** The gateway response type, when the gateway answered itself. */
  readonly error?: string;
}

const accessLog = (logs: readonly string[]): AccessLogEntry[] =>
  logs.filter((l) => l.startsWith('[gateway] {')).map((l) => JSON.parse(l.slice('[gateway] '.length)) as AccessLogEntry);

/**
 * The local gateway's access log lines (`[gateway] {…}`) for paths under `prefix` and for
 * requests it could not parse: every request the gateway answered there, to prove a recorder
 * missed none.
 */
export const accessLogEntries = (logs: readonly string[], prefix: string): AccessLogEntry[] =>
  accessLog(logs)
    // No path: a request the gateway could not parse (it still answered).
    .filter((entry) => entry.path === undefined || entry.path === prefix || entry.path.startsWith(`${prefix}/`));

/** The access log entries under `prefix` (see {@link accessLogEntries}) whose request `exchanges` did not record. */
export const unrecorded = (logs: readonly string[], prefix: string, exchanges: readonly Exchange[]): AccessLogEntry[] => {
  const recorded = new Set(exchanges.map((e) => e.requestId));
  return accessLogEntries(logs, prefix).filter((entry) => !recorded.has(entry.requestId));
};

/** The request ids the gateway answered itself (a gateway response, or a request it could not parse), by its access log. */
export const gatewayAnsweredIds = (logs: readonly string[]): Set<string> =>
  new Set(
    accessLog(logs)
      .filter((entry) => entry.error !== undefined)
      .map((entry) => entry.requestId),
  );
