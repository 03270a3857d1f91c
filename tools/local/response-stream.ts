/**
 * Reads what a streaming function writes for an HTTP integration (Lambda's response streaming
 * as API Gateway receives it): its metadata as JSON (`statusCode`, `headers`,
 * `multiValueHeaders`, `cookies`), eight NUL bytes, then the body as it comes.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { HTTP_PRELUDE_DELIMITER, invokeStreaming, isStreamingHandler, responseStream } from './lambda-worker.js';

export interface StreamedHead {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly multiValueHeaders: Readonly<Record<string, readonly string[]>>;
}

/** Metadata larger than this is not a response a function meant to send. */
const MAX_PRELUDE_BYTES = 1024 * 1024;

const asHead = (text: string): StreamedHead | undefined => {
  try {
    const value = JSON.parse(text) as { statusCode?: unknown; headers?: unknown; multiValueHeaders?: unknown };
    const statusCode = value.statusCode ?? 200;
    if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) return undefined;
    return {
      statusCode,
      headers: (value.headers ?? {}) as Record<string, string>,
      multiValueHeaders: (value.multiValueHeaders ?? {}) as Record<string, string[]>,
    };
  } catch {
    return undefined;
  }
};

/**
 * A reader of one streamed answer: `push` each chunk as it arrives; `onHead` is called once, when
 * the metadata is complete (`undefined` when it is malformed or too large), then `onBody` with
 * each part of the body.
 */
export const streamedResponseReader = (handlers: { onHead(head: StreamedHead | undefined): void; onBody(data: Uint8Array): void }) => {
  let state: 'head' | 'body' | 'broken' = 'head';
  let pending = Buffer.alloc(0);
  return {
    push(data: Uint8Array): void {
      if (state === 'body') {
        if (data.length) handlers.onBody(data);
        return;
      }
      if (state === 'broken') return;
      pending = Buffer.concat([pending, data]);
      const at = pending.indexOf(HTTP_PRELUDE_DELIMITER);
      if (at < 0) {
        if (pending.length > MAX_PRELUDE_BYTES) (state = 'broken'), handlers.onHead(undefined);
        return;
      }
      const head = asHead(pending.subarray(0, at).toString('utf8'));
      const rest = pending.subarray(at + HTTP_PRELUDE_DELIMITER.length);
      pending = Buffer.alloc(0);
      state = head ? 'body' : 'broken';
      handlers.onHead(head);
      if (head && rest.length) handlers.onBody(rest);
    },
    /** Whether the metadata was read whole and well-formed. */
    get started(): boolean {
      return state === 'body';
    },
  };
};

/** A Lambda proxy handler as tests and benches call it. */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A handler as a test calls it, `(event, context) → result`, a streaming one's answer read to its end. */
export const proxyHandler = (handler: unknown): ProxyHandler =>
  isStreamingHandler(handler) ? (event, context) => collectStreamed(handler, event, context).then((r) => r.result) : (handler as ProxyHandler);

/** A streamed answer read to its end: as a proxy result, and the body's chunks as they were written. */
export interface Streamed {
  readonly result: APIGatewayProxyResult;
  readonly chunks: readonly string[];
}

/**
 * Runs a streaming handler as Lambda's runtime does (with a response stream) and reads what it
 * wrote as API Gateway does: the metadata, then the body, chunk by chunk.
 */
export const collectStreamed = async (handler: unknown, event: APIGatewayProxyEvent, context: Context): Promise<Streamed> => {
  let head: { statusCode: number; headers: Record<string, string> } | undefined;
  const chunks: string[] = [];
  const reader = streamedResponseReader({
    onHead: (h) => {
      if (!h) throw new Error('the streaming handler wrote malformed metadata');
      head = { statusCode: h.statusCode, headers: { ...h.headers } };
    },
    onBody: (data) => chunks.push(Buffer.from(data).toString('utf8')),
  });
  await invokeStreaming(
    handler,
    event,
    responseStream((data) => reader.push(data)),
    context,
  );
  if (!head) throw new Error('the streaming handler wrote no metadata');
  return { result: { ...head, body: chunks.join('') }, chunks };
};
