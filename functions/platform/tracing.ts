/**
 * X-Ray subsegments without the X-Ray SDK (which would add its weight to every cold start).
 *
 * Lambda with active tracing records the function's own segment; what it cannot see is a
 * call the code makes itself, such as the request to an orchestrator. {@link traceSubsegment}
 * times such a call and sends it to the X-Ray daemon as an independent subsegment document
 * (one UDP datagram, the daemon's documented protocol), attached to the invocation's segment
 * through `_X_AMZN_TRACE_ID` (`Root`, `Parent`, `Sampled`).
 *
 * Without a daemon address or a sampled trace header (tests, local mode, unsampled
 * requests) the call runs untraced and nothing is sent. A failure to send never fails the call.
 */
import type { Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';

/** Where the daemon listens for UDP segment documents. */
export interface DaemonAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `AWS_XRAY_DAEMON_ADDRESS`: `host:port`, or the two-address form
 * `tcp:host:port udp:host:port` (the UDP one is used). Undefined when absent or malformed.
 */
export const parseDaemonAddress = (raw: string | undefined): DaemonAddress | undefined => {
  if (!raw) return undefined;
  const parts = raw.trim().split(/\s+/);
  const udp = parts.find((p) => p.startsWith('udp:'))?.slice(4) ?? (parts.length === 1 ? parts[0] : undefined);
  const match = udp ? /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(udp) : null;
  if (!match) return undefined;
  const port = Number(match[2]);
  return port > 0 && port < 65_536 ? { host: match[1]!, port } : undefined;
};

/** The parts of an X-Ray trace header a subsegment needs. */
export interface TraceContext {
  readonly root: string;
  readonly parent: string;
  readonly sampled: boolean;
}

/** Parses `Root=1-…;Parent=…;Sampled=1`; undefined unless both ids are well formed. */
export const parseTraceHeader = (raw: string | undefined): TraceContext | undefined => {
  if (!raw) return undefined;
  const fields = new Map<string, string>();
  for (const part of raw.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const root = fields.get('Root');
  const parent = fields.get('Parent');
  if (!root || !/^1-[0-9a-f]{8}-[0-9a-f]{24}$/.test(root) || !parent || !/^[0-9a-f]{16}$/.test(parent)) return undefined;
  return { root, parent, sampled: fields.get('Sampled') === '1' };
};

/** What the caller tells about the traced call. */
export interface SubsegmentMeta {
  /** `remote` for a call to another service (the default), `aws` for an AWS API. */
  readonly namespace?: 'remote' | 'aws';
  /** The outgoing request; the URL is recorded without credentials, query or fragment. */
  readonly http?: { readonly method: string; readonly url: string };
  /** Indexed key/values (filterable in the X-Ray console). Never secrets. */
  readonly annotations?: Readonly<Record<string, string | number | boolean>>;
}

/** Lets the traced function report what it learned. */
export interface Subsegment {
  /** The answer's HTTP status: 4xx marks the subsegment as an error (429 also throttle), 5xx as a fault. */
  setHttpStatus(status: number): void;
  addAnnotation(key: string, value: string | number | boolean): void;
}

/** A URL as it may be recorded: origin and path only. */
export const safeUrl = (raw: string): string => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'invalid-url';
  }
};

/** X-Ray names: up to 200 of letters, digits, spaces and `_ . : / % & # = + \ - @`. */
const safeName = (name: string): string => name.replace(/[^\p{L}\p{N}\s_.:/%&#=+\\\-@]/gu, '_').slice(0, 200) || 'call';
const safeKey = (key: string): string => key.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 500);
const newId = (): string => randomBytes(8).toString('hex');

/** What an untraced call reports to: nothing is recorded, so nothing is kept. */
const UNTRACED: Subsegment = { setHttpStatus: () => undefined, addAnnotation: () => undefined };

export class Tracer {
  #socket: Socket | undefined;

  constructor(
    private readonly daemon: DaemonAddress | undefined,
    /** Read per call: Lambda sets `_X_AMZN_TRACE_ID` anew for every invocation. */
    private readonly traceHeader: () => string | undefined = () => process.env['_X_AMZN_TRACE_ID'],
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Runs `fn` as subsegment `name` of the current invocation and sends the subsegment when
   * the invocation is traced and sampled. Whatever `fn` returns or throws is passed through.
   */
  trace<T>(name: string, meta: SubsegmentMeta, fn: (sub: Subsegment) => Promise<T>): Promise<T> {
    const context = this.daemon ? parseTraceHeader(this.traceHeader()) : undefined;
    // Untraced (no daemon, no header, not sampled: tests, local mode, most requests): the call
    // runs as is, and nothing of the subsegment is prepared.
    if (!context?.sampled) return fn(UNTRACED);
    return this.#traced(context, name, meta, fn);
  }

  async #traced<T>(context: TraceContext, name: string, meta: SubsegmentMeta, fn: (sub: Subsegment) => Promise<T>): Promise<T> {
    const state: { status?: number; annotations: Record<string, string | number | boolean> } = { annotations: {} };
    for (const [k, v] of Object.entries(meta.annotations ?? {})) state.annotations[safeKey(k)] = v;
    const sub: Subsegment = {
      setHttpStatus: (status) => {
        state.status = status;
      },
      addAnnotation: (key, value) => {
        state.annotations[safeKey(key)] = value;
      },
    };
    const start = this.clock() / 1000;
    let thrown: unknown;
    let failed = false;
    try {
      return await fn(sub);
    } catch (error) {
      failed = true;
      thrown = error;
      throw error;
    } finally {
      const document: Record<string, unknown> = {
        name: safeName(name),
        id: newId(),
        trace_id: context.root,
        parent_id: context.parent,
        type: 'subsegment',
        start_time: start,
        end_time: this.clock() / 1000,
        namespace: meta.namespace ?? 'remote',
      };
      if (meta.http || state.status !== undefined) {
        document['http'] = {
          ...(meta.http ? { request: { method: meta.http.method.toUpperCase(), url: safeUrl(meta.http.url) } } : {}),
          ...(state.status !== undefined ? { response: { status: state.status } } : {}),
        };
      }
      if (Object.keys(state.annotations).length) document['annotations'] = state.annotations;
      if (failed) {
        document['fault'] = true;
        // The exception's type only: a message can carry a URL or a secret.
        const type = thrown instanceof Error ? thrown.name : typeof thrown;
        document['cause'] = { exceptions: [{ id: newId(), type, message: type }] };
      } else if (state.status !== undefined && state.status >= 500) document['fault'] = true;
      else if (state.status !== undefined && state.status >= 400) {
        document['error'] = true;
        if (state.status === 429) document['throttle'] = true;
      }
      await this.#send(document);
    }
  }

  /** One datagram: the daemon's header line, then the document. Errors are swallowed. */
  #send(document: Record<string, unknown>): Promise<void> {
    const daemon = this.daemon!;
    const payload = Buffer.from(`{"format":"json","version":1}\n${JSON.stringify(document)}`);
    return new Promise((resolve) => {
      try {
        // node:dgram is loaded by the first traced call, not at init (most invocations are not traced).
        this.#socket ??= process
          .getBuiltinModule('node:dgram')
          .createSocket(isIPv6(daemon.host) ? 'udp6' : 'udp4')
          .on('error', () => undefined)
          .unref();
        this.#socket.send(payload, daemon.port, daemon.host, () => resolve());
      } catch {
        resolve();
      }
    });
  }
}

/** The container's tracer, configured from the Lambda environment. */
export const tracer = new Tracer(parseDaemonAddress(process.env['AWS_XRAY_DAEMON_ADDRESS']));

/**
 * Runs `fn` as its own X-Ray subsegment (e.g. the call to an orchestrator):
 * `traceSubsegment('nso lab-nso', { http: { method, url } }, async (sub) => { …; sub.setHttpStatus(res.status); return res; })`.
 */
export const traceSubsegment = <T>(name: string, meta: SubsegmentMeta, fn: (sub: Subsegment) => Promise<T>): Promise<T> => tracer.trace(name, meta, fn);
