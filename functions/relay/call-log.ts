/**
 * What the relay logs of a call through an adapter, by the adapter's `logLevel`
 * (`PUT /adapters/{name}/loglevel`; default `info`):
 *
 * - `error`: the call line (`relay call`) of calls the relay answered with a 5xx;
 * - `warn`: also of calls answered with a 4xx;
 * - `info`: the call line of every call (method, path, query parameter names, statuses,
 *   outcome, durations): never a body, a query value or a header value;
 * - `debug`: also a `relay exchange` line for each exchange with the orchestrator: the request's
 *   method, path, query parameter names, media types, body size and header names, and the
 *   answer's status, media type, body size and duration;
 * - `trace`: that line carries the request headers and both bodies too, each body cut to
 *   {@link TRACE_BODY_LIMIT} characters after redaction: the adapter's password and the
 *   `Authorization` credentials it was sent with (as is, JSON-escaped, percent-encoded or
 *   base64, form-encoded, XML-escaped) are removed wherever they appear, and so is the value of
 *   every member, XML element or attribute, or `name=value` pair whose name suggests a secret
 *   (see `isSecretField` in platform/redaction.ts). A body that still holds the password or the
 *   credentials in any other spelling a reader could decode (percent, entities, JSON escapes,
 *   base64 of a longer text) is logged as `[withheld: …]` instead, whole.
 */
import { parseJson } from '../platform/bounded-json.js';
import { truncateText, type LogLevel } from '../platform/logger.js';
import { REDACTED, WITHHELD, holdsSecret, redact, redactText } from '../platform/redaction.js';
import { charsetOf, isJsonMediaType, parseMediaType } from './media-type.js';

/** Characters of each body a `trace` line holds at most (after redaction). */
export const TRACE_BODY_LIMIT = 4096;

/** A body as a `trace` line shows it. */
export interface LoggedBody {
  /** Size of the whole body, in bytes. */
  readonly bytes: number;
  /** The redacted body, cut to {@link TRACE_BODY_LIMIT} characters. */
  readonly text: string;
  readonly truncated: boolean;
}

export interface ExchangeLog {
  readonly request: {
    readonly method: string;
    readonly path: string;
    readonly queryKeys?: readonly string[];
    readonly accept: string;
    readonly contentType?: string;
    readonly bytes: number;
    /** Header names (`debug`), or names and values with `Authorization` redacted (`trace`). */
    readonly headers: readonly string[] | Readonly<Record<string, string>>;
    readonly body?: LoggedBody;
  };
  readonly answer?: {
    readonly status: number;
    readonly contentType?: string;
    readonly bytes: number;
    readonly durationMs: number;
    readonly body?: LoggedBody;
  };
}

/** The level of the call line: error for a 5xx answer, warn for a 4xx, info otherwise. */
export const callLineLevel = (status: number): LogLevel => (status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info');

/**
 * A body as a `trace` line shows it. A JSON body (by its media type) is parsed and redacted
 * member by member; any other body (or JSON that does not parse, or nests too deep) as text.
 */
export const loggedBody = (body: string | Uint8Array, contentType: string | undefined, secrets: readonly string[]): LoggedBody => {
  const media = contentType === undefined ? undefined : parseMediaType(contentType);
  let text: string;
  if (typeof body === 'string') text = body;
  else {
    try {
      text = new TextDecoder(charsetOf(media) ?? 'utf-8').decode(body);
    } catch {
      text = new TextDecoder('utf-8').decode(body);
    }
  }
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  let shown: string | undefined;
  if (isJsonMediaType(media)) {
    try {
      const json = JSON.stringify(redact(parseJson(text), { secrets }));
      // A secret the walk cannot see (a number, a mix of encodings inside a string) withholds the body.
      shown = holdsSecret(json, secrets) ? WITHHELD : json;
    } catch {
      shown = undefined;
    }
  }
  const cut = truncateText(shown ?? redactText(text, secrets), TRACE_BODY_LIMIT);
  return { bytes, text: cut.text, truncated: cut.truncated };
};

/** Request headers for a `trace` line: every value, credentials redacted. */
export const loggedHeaders = (headers: Readonly<Record<string, string>>, secrets: readonly string[]): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, name.toLowerCase() === 'authorization' ? REDACTED : redactText(value, secrets)]));
