/**
 * The outbound HTTP client, for orchestrators (relay, health probes, compliance) and Vault.
 * One instance per container holds one keep-alive agent per protocol, so a warm function
 * reuses its TCP (and TLS) connections across invocations instead of paying a handshake per
 * call. It is built on node:http(s): the global `fetch` would load undici on the first call,
 * tens of milliseconds of CPU on a cold start.
 *
 * It is deliberately small: no redirects (Node's http never follows them, and we do not add
 * it), one deadline for the whole exchange, a cap on the body it reads, and a DNS lookup that
 * refuses link-local, metadata and (outside local mode) loopback addresses at connect time.
 *
 * Trust: Node's public roots, plus the private CAs of the PEM bundle that `NETCONFIG_CA_BUNDLE`
 * names (see ca-bundle.ts; read and checked when this module loads).
 */
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import http from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressRefusal } from './address-policy.js';
import { configuredTrust, trustIn } from './ca-bundle.js';

export type RelayMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Where a request goes: an origin, and the path (with query) sent as is. */
export interface Destination {
  readonly origin: URL;
  readonly path: string;
}

export interface OutboundRequest {
  readonly target: Destination;
  readonly method: RelayMethod;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as is; absent: no body (and no Content-Length). */
  readonly body?: string;
  /** The whole exchange (connect, send, headers, body) must end within this. */
  readonly timeoutMs: number;
  /** Reading stops, and the connection is destroyed, past this many body bytes. */
  readonly maxBodyBytes: number;
  /** Aborts the exchange (e.g. the function is about to run out of time). */
  readonly signal?: AbortSignal;
}

export interface OutboundResponse {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** How an exchange failed; the relay maps each kind to a status. */
export type OutboundFailure = 'timeout' | 'aborted' | 'connect' | 'tls' | 'blocked' | 'too-large' | 'protocol';

/** An exchange that produced no usable answer. `message` is for logs: it never holds the URL. */
export class OutboundError extends Error {
  /**
   * False only when the request certainly never left: no connection (refused, unknown host,
   * refused address, no route), or no TLS session to send it on. True whenever a byte of it
   * may have been written: the action may have run on the server.
   */
  mayHaveReached = true;

  constructor(
    readonly failure: OutboundFailure,
    message: string,
    /** The system error code (ECONNREFUSED, CERT_HAS_EXPIRED…), for logs. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }

  /** Marks the error as raised before anything was sent; returns it. */
  beforeSending(): this {
    this.mayHaveReached = false;
    return this;
  }
}

export interface HttpClient {
  send(request: OutboundRequest): Promise<OutboundResponse>;
  /** Closes pooled connections (tests, local mode shutdown). */
  close(): void;
}

/** Resolves every address of a host name (the shape of `dns.promises.lookup` with `all: true`). */
export type ResolveAll = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;

const BLOCKED_CODE = 'ERR_RELAY_BLOCKED_ADDRESS';

/**
 * A `lookup` for the agents: resolves the name, and fails the connection when any address is
 * one the relay must not reach. Checking what DNS returns at connect time (not the name when
 * the request is built) is what defeats DNS rebinding.
 */
export const guardedLookup =
  // node:dns is loaded by the first lookup: a server given by IP address never needs it.
    (
      allowLoopback: boolean,
      resolve: ResolveAll = (hostname, options) => process.getBuiltinModule('node:dns').promises.lookup(hostname, options),
    ): LookupFunction =>
    (hostname, options, callback) => {
      resolve(hostname, { ...options, all: true }).then(
        (addresses) => {
          const blocked = addresses.find((a) => addressRefusal(a.address, { allowLoopback }) !== undefined);
          const first = addresses[0];
          if (blocked || !first) {
            const reason = blocked ? addressRefusal(blocked.address, { allowLoopback }) : 'no address';
            const error: NodeJS.ErrnoException = new Error(`host name resolves to a refused address (${reason})`);
            error.code = BLOCKED_CODE;
            // Mutation: the address → another text (here and in the rejection below) is equivalent: Node ignores it
            // when the lookup fails.
            callback(error, '');
            return;
          }
          if (options.all) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, ''),
      );
    };

const TLS_CODE = /CERT|SELF_SIGNED|^ERR_TLS_|^ERR_SSL_|^EPROTO$|HOSTNAME_MISMATCH/;
// A keep-alive socket the server closed while we were idle (or frozen, as Lambda freezes
// between invocations) fails the next request this way before any answer arrives.
// Mutation: `EPIPE` and `ECONNABORTED` removed survive, untested: loopback gives a reset (`ECONNRESET`, tested).
const STALE_SOCKET_CODE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** IP literals whose verdict a client remembers. */
const MAX_LITERAL_VERDICTS = 256;
/** Sockets that connected (and, for TLS, completed their handshake): every later request on one may have been sent. */
const connectedSockets = new WeakSet<object>();
const securedSockets = new WeakSet<object>();
/** Methods safe to send twice (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'PUT', 'DELETE']);

const classify = (error: NodeJS.ErrnoException & { library?: string }): OutboundError => {
  const code = error.code;
  if (error instanceof OutboundError) return error;
  if (code === BLOCKED_CODE) return new OutboundError('blocked', error.message, code);
  if ((code && TLS_CODE.test(code)) || error.library === 'SSL routines') {
    return new OutboundError('tls', 'TLS handshake failed', code);
  }
  if (code?.startsWith('HPE_')) return new OutboundError('protocol', 'the answer is not valid HTTP', code);
  return new OutboundError('connect', 'connection failed', code);
};

export interface HttpClientOptions {
  /** Whether loopback addresses may be reached (orchestrators: local mode only; Vault: always, for a local agent). */
  readonly allowLoopback: boolean;
  /**
   * Certificates (PEM) of private CAs added to Node's public roots; default those of the
   * bundle that `NETCONFIG_CA_BUNDLE` names (none when it is unset).
   */
  readonly ca?: string | readonly string[];
  /** DNS resolution; tests inject answers such as a rebinding to 169.254.169.254. */
  readonly resolve?: ResolveAll;
  readonly maxSockets?: number;
}

/** The client {@link createHttpClient} makes: an {@link HttpClient} that says whom it trusts. */
export interface TrustingHttpClient extends HttpClient {
  /**
   * The CA certificates an https connection trusts: Node's public roots followed by the
   * private CAs; undefined when there is no private CA (Node's default store, as is).
   */
  trustedCertificates(): readonly string[] | undefined;
}

/**
 * Creates the client and its agents; call once per container.
 *
 * Longer than 80 lines on purpose: a factory whose short methods share its client, table and
 * caches through the closure; each method is its own unit (and is tested as one).
 */
export const createHttpClient = (options: HttpClientOptions): TrustingHttpClient => {
  const lookup = guardedLookup(options.allowLoopback, options.resolve);
  const common = { keepAlive: true, scheduling: 'lifo' as const, maxSockets: options.maxSockets ?? 32, lookup };
  const httpAgent = new http.Agent(common);
  const plain = { request: http.request, agent: httpAgent } as const;
  const trust = options.ca === undefined ? configuredTrust : trustIn(typeof options.ca === 'string' ? [options.ca] : options.ca);
  // Created on the first https request, not at init: a cold start does not pay for the agent,
  // nor for the root certificates (an ES import of node:tls built them through its facade even
  // when no extra CA is given), before a server speaks https. `getBuiltinModule` rather
  // than `import()`: synchronous, and no ES-module facade to build.
  let https: { readonly request: typeof http.request; readonly agent: HttpsAgent } | undefined;
  const secureTransport = (): NonNullable<typeof https> => {
    if (!https) {
      const builtin = process.getBuiltinModule('node:https');
      https = { request: builtin.request, agent: new builtin.Agent({ ...common, ...(trust ? { secureContext: trust.context() } : {}) }) };
    }
    return https;
  };

  // An IP literal's verdict never changes: it is worked out once, not on every call (each
  // check builds a SocketAddress per range list). Bounded: names come from adapters.
  const literalVerdicts = new Map<string, string | undefined>();
  const literalRefusal = (address: string): string | undefined => {
    // Mutation: `has` → `false`, the bound's comparison and the `set` removed are equivalent: `addressRefusal`
    // depends on nothing else, so only the time taken changes.
    if (literalVerdicts.has(address)) return literalVerdicts.get(address);
    const reason = addressRefusal(address, { allowLoopback: options.allowLoopback });
    if (literalVerdicts.size >= MAX_LITERAL_VERDICTS) literalVerdicts.delete(literalVerdicts.keys().next().value!);
    literalVerdicts.set(address, reason);
    return reason;
  };

  // One attempt is one timeline of one request's events (socket, TLS, response, body, deadline)
  // settling one promise: longer than 80 lines on purpose, the handlers share its state.
  const attempt = (request: OutboundRequest, deadline: number): Promise<OutboundResponse> =>
    new Promise<OutboundResponse>((resolve, reject) => {
      const { origin, path } = request.target;
      const secure = origin.protocol === 'https:';
      // Mutation: without `^` or `$` is equivalent: a URL's host name is bracketed whole or not at all.
      const hostname = origin.hostname.replace(/^\[(.*)\]$/, '$1');
      // An IP literal never goes through `lookup`, so it is checked here.
      if (isIP(hostname)) {
        const reason = literalRefusal(hostname);
        if (reason) return reject(new OutboundError('blocked', `refused address (${reason})`).beforeSending());
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return reject(new OutboundError('timeout', 'no time left to send').beforeSending());
      if (request.signal?.aborted) return reject(new OutboundError('aborted', 'aborted before sending').beforeSending());

      let settled = false;
      let answered = false;
      // A TLS connection that broke after TCP connected but before the handshake completed
      // is a TLS failure (e.g. the server does not speak TLS), whatever the error code says.
      let tcpConnected = false;
      let tlsEstablished = false;
      const transport = secure ? secureTransport() : plain;
      const outgoing = transport.request({
        agent: transport.agent,
        protocol: origin.protocol,
        hostname,
        port: origin.port || undefined,
        method: request.method,
        path,
        headers: {
          ...request.headers,
          // Mutation: the header dropped is equivalent: `end(body)` on a request with no body written yet makes Node
          // send the same length.
          ...(request.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(request.body)) } : {}),
        },
      });
      const settle = (outcome: () => void): void => {
        // Mutation: `if (settled) return` and `settled = true` → `false`, the error handler's `if (settled) return`
        // and `once: true` → `false` are equivalent: a second settlement has no effect on a settled promise,
        // clearing and removing again is idempotent, and `destroy()` on a finished request leaves its socket alone.
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      /**
       * Whether the request may have left: only once a connection (and for https its TLS
       * session) exists can a byte of it be written. A pooled socket always could.
       */
      const couldHaveSent = (): boolean => outgoing.reusedSocket || (tcpConnected && (!secure || tlsEstablished));
      const rejectWith = (error: OutboundError): void => reject(couldHaveSent() ? error : error.beforeSending());
      /** Fails the exchange and destroys the socket: it must not go back to the pool half-read. */
      const fail = (error: OutboundError): void => {
        settle(() => rejectWith(error));
        outgoing.destroy();
      };
      const timer = setTimeout(() => fail(new OutboundError('timeout', `no complete answer within ${remaining} ms`)), remaining);
      const onAbort = (): void => fail(new OutboundError('aborted', 'aborted'));
      request.signal?.addEventListener('abort', onAbort, { once: true });

      outgoing.on('socket', (socket) => {
        // A request queued behind the pool's cap gets a socket that served another request
        // already, without `reusedSocket` set: the sets below remember what each socket did.
        if (outgoing.reusedSocket || (secure ? securedSockets.has(socket) : connectedSockets.has(socket))) {
          tcpConnected = tlsEstablished = true;
          return;
        }
        socket.once('connect', () => {
          connectedSockets.add(socket);
          tcpConnected = true;
        });
        // Mutation: → `true` is equivalent: a plain socket never emits `secureConnect`.
        if (secure) {
          socket.once('secureConnect', () => {
            securedSockets.add(socket);
            tlsEstablished = true;
          });
        }
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        const retryable = outgoing.reusedSocket && !answered && error.code !== undefined && STALE_SOCKET_CODE.has(error.code);
        if (retryable) settle(() => rejectWith(Object.assign(classify(error), { retryable: true })));
        else if (secure && tcpConnected && !tlsEstablished && !(error instanceof OutboundError)) {
          fail(new OutboundError('tls', 'TLS handshake failed', error.code));
        } else fail(classify(error));
      });
      outgoing.on('response', (incoming) => {
        // Mutation: → `false` is equivalent: once the answer has begun, Node reports a broken connection on the
        // answer, so the request's error handler, the only reader, is not reached.
        answered = true;
        const status = incoming.statusCode ?? 0;
        const declared = Number(incoming.headers['content-length']);
        if (Number.isFinite(declared) && declared > request.maxBodyBytes) {
          fail(new OutboundError('too-large', `declared body of ${declared} bytes exceeds ${request.maxBodyBytes}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxBodyBytes) {
            fail(new OutboundError('too-large', `body exceeds ${request.maxBodyBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        incoming.on('end', () => settle(() => resolve({ status, contentType: incoming.headers['content-type'], body: Buffer.concat(chunks) })));
        incoming.on('error', (error: NodeJS.ErrnoException) => fail(classify(error)));
        // Mutation: this handler (removed, its event renamed, `!incoming.complete` altered, its message) is
        // equivalent: a cut answer first emits `error` (`ECONNRESET`, tested), which settles the exchange; after a
        // complete answer `fail` only destroys a finished request.
        incoming.on('close', () => {
          if (!incoming.complete) fail(new OutboundError('connect', 'connection closed before the answer was complete'));
        });
      });
      outgoing.end(request.body);
    });

  return {
    trustedCertificates: () => trust?.certificates(),
    async send(request) {
      const deadline = Date.now() + request.timeoutMs;
      try {
        return await attempt(request, deadline);
      } catch (error) {
        // Once, and only when a pooled keep-alive socket died before any answer: the server
        // had closed it while idle (or while Lambda was frozen). Node's documentation
        // recommends this retry; it is limited to idempotent methods, because a reset can also
        // come after the server read the request, and a POST or PATCH must not run twice.
        if (IDEMPOTENT_METHODS.has(request.method) && error instanceof OutboundError && (error as OutboundError & { retryable?: boolean }).retryable) {
          return attempt(request, deadline);
        }
        throw error;
      }
    },
    close() {
      httpAgent.destroy();
      https?.agent.destroy();
    },
  };
};
