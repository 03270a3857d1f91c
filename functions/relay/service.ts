/**
 * The relay's business logic (spec 4.1): check the request, find the adapter, resolve its
 * credentials, send one REST action to its orchestrator and turn the answer into
 * `[ { result, data } ]`. Every dependency comes in as an argument.
 */
import type { Adapter, SecretResolver } from '../adapters/model.js';
import { DEFAULT_TIMEOUT_MS } from '../adapters/validate.js';
import {
  BadGateway,
  BadRequest,
  Conflict,
  GatewayTimeout,
  HttpProblem,
  InternalError,
  NotFound,
  describeFieldErrors,
  type FieldError,
} from '../platform/problem.js';
import { OutboundError, type HttpClient, type OutboundRequest, type OutboundResponse, type RelayMethod } from '../outbound/http-client.js';
import { JsonTooDeep, MAX_JSON_DEPTH, parseJson } from '../platform/bounded-json.js';
import { passes, type LogLevel } from '../platform/logger.js';
import { loggedBody, loggedHeaders, type ExchangeLog } from './call-log.js';
import { charsetOf, isJsonMediaType, parseMediaType } from './media-type.js';
import { InvalidBaseUrl, adapterOrigin, checkRelayPath, targetOnOrigin } from '../outbound/target.js';

/** The request body of `POST /orch_manager/restAction/{adapterId}` (spec 2.1), after schema validation. */
export interface RestActionRequest {
  readonly params: {
    readonly path: string;
    readonly accept: string;
    readonly contentType?: string;
    /** GET, POST, PUT, PATCH or DELETE in any case; {@link DEFAULT_METHOD} when absent. */
    readonly method?: string;
  };
  readonly body: Record<string, unknown>;
}

/** One element of the answer (spec 2.2): the orchestrator's status as digits, and its body. */
export interface RestActionResult {
  readonly result: string;
  readonly data?: unknown;
}

/**
 * POST when `params.method` is absent: the body is required, and a "REST action" on NSO (an
 * action such as `sync-from`, or creating data) is a POST. GET and DELETE send no body.
 */
export const DEFAULT_METHOD: RelayMethod = 'POST';
const METHODS_WITH_BODY = new Set<RelayMethod>(['POST', 'PUT', 'PATCH']);

export interface RelayLimits {
  /** Orchestrator timeout when the adapter sets none. */
  readonly defaultTimeoutMs: number;
  /** Kept free before the function's deadline, to answer 504 and return in time. */
  readonly safetyMarginMs: number;
  /** Below this much time left there is no point in sending: 504 at once. */
  readonly minimumTimeoutMs: number;
  /** Orchestrator body bytes read at most (keeps the Lambda response under 6 MB). */
  readonly maxBodyBytes: number;
}

export const DEFAULT_LIMITS: RelayLimits = {
  defaultTimeoutMs: DEFAULT_TIMEOUT_MS,
  safetyMarginMs: 500,
  minimumTimeoutMs: 50,
  maxBodyBytes: 4 * 1024 * 1024,
};

/** One structured log line per call: no secret, no body, no query values. */
export interface RelayLogLine {
  readonly adapter: string;
  readonly method: RelayMethod;
  /** The path without its query; `[refused]` when the path itself was refused. */
  readonly path: string;
  /** Names of the query parameters (their values may be data, so they are left out). */
  readonly queryKeys?: readonly string[];
  /** What the relay answered: 200, or the problem's status. */
  readonly status: number;
  /** The orchestrator's status, when it answered. */
  readonly upstreamStatus?: number;
  /** `answered`, or why not (`timeout`, `connect`, `redirect`, `too-large`, `not-found`…). */
  readonly outcome: string;
  readonly durationMs: number;
  /** Time of the HTTP exchange alone; absent when nothing was sent. */
  readonly upstreamMs?: number;
  /** The system error code of a failed exchange (ECONNREFUSED, CERT_HAS_EXPIRED…). */
  readonly errorCode?: string;
  /** The adapter's log level, which decides what is written of this call (`info` before the adapter is known). */
  readonly logLevel: LogLevel;
  /** At `debug` and `trace`: the exchange with the orchestrator, when one took place (see call-log.ts). */
  readonly exchange?: ExchangeLog;
}

export interface RelayDeps {
  /**
   * `forget` (when present) drops a cached adapter: called when a call through it failed in a
   * way a stale adapter explains (see {@link STALE_ADAPTER_FAILURES}), so the next call reads it afresh.
   */
  readonly adapters: { get(name: string): Promise<Adapter | undefined>; forget?(name: string): void };
  /** `forget` (when present) drops a cached secret: called when the orchestrator answers 401. */
  readonly secrets: SecretResolver & { forget?(reference: string): void };
  readonly client: HttpClient;
  /** Time left before the function is stopped (`context.getRemainingTimeInMillis`). */
  readonly remainingTimeMs: () => number;
  readonly log: (line: RelayLogLine) => void;
  readonly limits?: RelayLimits;
  readonly now?: () => number;
  /** Wraps the exchange (tracing); default: runs it as is. */
  readonly traceCall?: (adapter: string, request: OutboundRequest, send: () => Promise<OutboundResponse>) => Promise<OutboundResponse>;
}

/**
 * Exchange failures a stale cached adapter could explain: its orchestrator moved (another
 * address, port or scheme, which shows as no connection, no TLS, a refused address, no answer
 * or no HTTP), or its timeout changed. After one, the relay drops the adapter from its cache.
 */
export const STALE_ADAPTER_FAILURES: ReadonlySet<OutboundError['failure']> = new Set(['connect', 'tls', 'blocked', 'timeout', 'protocol']);

/** Origins of the adapters this container has seen (a cached adapter is the same object call after call). */
const origins = new WeakMap<Adapter, URL>();

/** The adapter's origin; a 500 (never shown, logged with the adapter's name) when its `baseUrl` is damaged. */
const originOf = (adapter: Adapter): URL => {
  let origin = origins.get(adapter);
  if (!origin) {
    try {
      origin = adapterOrigin(adapter.baseUrl);
    } catch (error) {
      if (!(error instanceof InvalidBaseUrl)) throw error;
      throw new InternalError(`adapter has an invalid baseUrl: ${error.message}`, { adapter: adapter.name });
    }
    origins.set(adapter, origin);
  }
  return origin;
};

/**
 * A JSON result array is at most 6 times the orchestrator's body (a control byte of a text
 * body becomes `\u00XX`; a re-serialized JSON number such as `1e20` grows at most 5.25
 * times), and escaping it once more at most doubles it. A body under the limit divided by
 * this cannot make the Lambda response too large, and is not measured.
 */
export const MAX_RESULT_GROWTH = 12;
/** Room for the result's envelope (`[{"result":"200","data":…}]`) in that bound. */
const RESULT_ENVELOPE_BYTES = 1024;

export interface RelayInput {
  readonly adapterId: string;
  readonly request: RestActionRequest;
  readonly signal?: AbortSignal;
}

interface CheckedRequest {
  readonly method: RelayMethod;
  readonly path: string;
  readonly accept: string;
  readonly contentType: string | undefined;
}

/**
 * What the schema cannot say: the path can only name a path on the adapter's origin, and
 * the media types are single, well-formed media types. All violations are reported at once.
 */
export const checkRequest = (request: RestActionRequest): CheckedRequest => checkParams(request, checkRelayPath(request.params.path));

/** {@link checkRequest}, given what {@link checkRelayPath} said of `params.path` (the relay checks it once per call). */
const checkParams = (request: RestActionRequest, pathProblem: string | undefined): CheckedRequest => {
  const { params } = request;
  const errors: FieldError[] = [];
  const method = (params.method?.toUpperCase() ?? DEFAULT_METHOD) as RelayMethod;
  if (pathProblem) errors.push({ in: 'body', field: 'params.path', message: pathProblem });
  const accept = parseMediaType(params.accept);
  if (!accept) errors.push({ in: 'body', field: 'params.accept', message: 'must be one media type such as application/yang-data+json' });
  let contentType: string | undefined;
  if (params.contentType !== undefined) {
    const parsed = parseMediaType(params.contentType);
    if (!parsed) {
      errors.push({ in: 'body', field: 'params.contentType', message: 'must be one media type such as application/yang-data+json' });
    } else if (METHODS_WITH_BODY.has(method) && !isJsonMediaType(parsed)) {
      errors.push({ in: 'body', field: 'params.contentType', message: 'must be a JSON media type (the body is sent as JSON)' });
    }
    contentType = params.contentType.trim();
  } else if (accept && isJsonMediaType(accept)) {
    // The body is JSON in the dialect the caller asked to be answered in.
    contentType = params.accept.trim();
  } else {
    contentType = 'application/json';
  }
  if (errors.length) {
    throw new BadRequest(`The request is invalid: ${describeFieldErrors(errors)}.`, errors);
  }
  return { method, path: params.path, accept: params.accept.trim(), contentType };
};

/** The record version (`lastUpdated`) this container last relayed through, per adapter; bounded. */
const versionsSeen = new Map<string, string>();
const MAX_VERSIONS_SEEN = 1_000;

/** Records the adapter's version; true when this container had seen an older one (its cached password may be stale). */
const revisionSeen = (adapter: Adapter): boolean => {
  const before = versionsSeen.get(adapter.name);
  if (before === adapter.lastUpdated) return false;
  versionsSeen.delete(adapter.name);
  versionsSeen.set(adapter.name, adapter.lastUpdated);
  if (versionsSeen.size > MAX_VERSIONS_SEEN) versionsSeen.delete(versionsSeen.keys().next().value!);
  return before !== undefined;
};

/** A problem with the outcome word and error code for the log line. */
class RelayFailure extends Error {
  constructor(
    readonly problem: HttpProblem,
    readonly outcome: string,
    readonly errorCode?: string,
  ) {
    super(problem.detail);
  }
}

/**
 * The 502 of an answer nested deeper than {@link MAX_JSON_DEPTH}: the documented `bad-gateway`
 * problem, a class of its own so that a compliance check can say why the device was not graded.
 */
export class AnswerTooDeep extends BadGateway {}

/** Decoders by charset label, reused across calls (`decode` without `stream` keeps no state). */
const decoders = new Map<string, InstanceType<typeof TextDecoder>>();
const MAX_DECODERS = 16;

/** The decoder of a charset label; UTF-8 for a label the encoding standard does not know. */
const decoderFor = (label: string): InstanceType<typeof TextDecoder> => {
  let decoder = decoders.get(label);
  if (!decoder) {
    try {
      decoder = new TextDecoder(label);
    } catch {
      decoder = decoderFor('utf-8'); // an unknown charset label
    }
    // The labels come from orchestrators' answers: keep a few, never an unbounded number.
    if (decoders.size >= MAX_DECODERS) decoders.delete(decoders.keys().next().value!);
    decoders.set(label, decoder);
  }
  return decoder;
};

/**
 * `data` of a result: parsed JSON for JSON media types (at most {@link MAX_JSON_DEPTH} levels
 * deep, as request bodies), text otherwise, absent when empty.
 */
const answerData = (adapter: string, response: OutboundResponse): { data?: unknown } => {
  if (response.body.length === 0) return {};
  const media = response.contentType === undefined ? undefined : parseMediaType(response.contentType);
  const text = decoderFor(charsetOf(media) ?? 'utf-8').decode(response.body);
  if (!isJsonMediaType(media)) return { data: text };
  try {
    return { data: parseJson(text) };
  } catch (error) {
    if (error instanceof JsonTooDeep) {
      throw new RelayFailure(
        new AnswerTooDeep(
          `The orchestrator of adapter '${adapter}' answered with JSON nested deeper than ${MAX_JSON_DEPTH} levels, which the relay does not accept.`,
        ).afterSending(),
        'too-deep',
      );
    }
    throw new RelayFailure(
      new BadGateway(`The orchestrator of adapter '${adapter}' answered with a body that is not valid JSON for its declared media type.`).afterSending(),
      'bad-json',
    );
  }
};

/**
 * The problem of a failed outbound call. Failures after the request may have reached the
 * orchestrator are marked {@link HttpProblem.afterSending}: the action may have run there.
 * Failures before it could leave (no connection, refused address, failed TLS handshake) are
 * not: a retry under the same Idempotency-Key runs again.
 */
const outboundProblem = (adapter: string, error: OutboundError, timeoutMs: number): HttpProblem => {
  const problem = exchangeProblem(adapter, error, timeoutMs);
  return error.mayHaveReached ? problem.afterSending() : problem;
};

const exchangeProblem = (adapter: string, error: OutboundError, timeoutMs: number): HttpProblem => {
  const who = `the orchestrator of adapter '${adapter}'`;
  switch (error.failure) {
    case 'timeout':
    case 'aborted':
      return new GatewayTimeout(`${capital(who)} did not answer within ${timeoutMs} ms.`);
    case 'tls':
      return new BadGateway(
        `The TLS handshake with ${who} failed (the certificate is not trusted, expired or for another name, or the server does not speak TLS).`,
      );
    case 'blocked':
      return new BadGateway(`The address of ${who} is not one the relay may connect to (link-local, metadata, or loopback outside local mode).`);
    case 'too-large':
      return new BadGateway(`${capital(who)} answered with a body larger than the relay accepts.`);
    case 'protocol':
      return new BadGateway(`${capital(who)} answered with something that is not valid HTTP.`);
    case 'connect':
      // A refused connection and one that broke after the request was written look alike here.
      return new BadGateway(`The relay could not connect to ${who}, or the connection broke before a complete answer.`);
  }
};

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

const logPath = (path: string, refused: boolean): { path: string; queryKeys?: string[] } => {
  if (refused) return { path: '[refused]' };
  const queryAt = path.indexOf('?');
  if (queryAt === -1) return { path };
  const keys = [...new URLSearchParams(path.slice(queryAt + 1)).keys()];
  return { path: path.slice(0, queryAt), queryKeys: [...new Set(keys)] };
};

/** The request part of a `debug` (metadata) or `trace` (`secrets` given: headers and body too) exchange line. */
const exchangeLog = (checked: CheckedRequest, outbound: OutboundRequest, secrets: readonly string[] | undefined): ExchangeLog => {
  const { path, queryKeys } = logPath(checked.path, false);
  const contentType = outbound.headers['Content-Type'];
  return {
    request: {
      method: outbound.method,
      path,
      ...(queryKeys ? { queryKeys } : {}),
      accept: checked.accept,
      ...(contentType ? { contentType } : {}),
      bytes: outbound.body === undefined ? 0 : Buffer.byteLength(outbound.body),
      headers: secrets ? loggedHeaders(outbound.headers, secrets) : Object.keys(outbound.headers),
      ...(secrets && outbound.body !== undefined ? { body: loggedBody(outbound.body, contentType, secrets) } : {}),
    },
  };
};

/** The exchange line with the orchestrator's answer, when there was one. */
const withAnswer = (exchange: ExchangeLog, response: OutboundResponse | undefined, durationMs: number, secrets: readonly string[] | undefined): ExchangeLog =>
  response === undefined
    ? exchange
    : {
        ...exchange,
        answer: {
          status: response.status,
          ...(response.contentType ? { contentType: response.contentType } : {}),
          bytes: response.body.length,
          durationMs,
          ...(secrets ? { body: loggedBody(response.body, response.contentType, secrets) } : {}),
        },
      };

/**
 * An unexpected failure once the orchestrator has answered (`upstreamStatus` set): the action ran
 * there, so it is a 500 marked {@link HttpProblem.afterSending}, which an `Idempotency-Key` keeps
 * (a retry must not send the action again). Before an answer: undefined (the error goes on as it is).
 */
const afterAnswer = (line: { readonly upstreamStatus?: number }, adapter: string, error: unknown): HttpProblem | undefined =>
  line.upstreamStatus === undefined
    ? undefined
    : new InternalError(`the relay failed on the answer of the orchestrator of adapter '${adapter}'`, { adapter, error }).afterSending();

/** What the relay logs of a call, filled in as the call goes. */
type CallLine = {
  status: number;
  outcome: string;
  upstreamStatus?: number;
  upstreamMs?: number;
  errorCode?: string;
  logLevel: LogLevel;
  exchange?: ExchangeLog;
};

/** The adapter a call goes through: known and running. Its log level is set on the line first, so that a refusal logs at it. */
const runningAdapter = async (adapterId: string, deps: RelayDeps, line: CallLine): Promise<Adapter> => {
  const adapter = await deps.adapters.get(adapterId);
  if (!adapter) throw new RelayFailure(new NotFound(`No adapter is named '${adapterId}'.`), 'not-found');
  line.logLevel = adapter.logLevel ?? 'info';
  // A stopped adapter is refused before anything is resolved or sent.
  if (adapter.state === 'STOPPED') {
    throw new RelayFailure(
      new Conflict(`Adapter '${adapter.name}' is stopped; start it (PUT /adapters/{name}/start) to relay through it.`, 'adapter-stopped'),
      'adapter-stopped',
    );
  }
  // A new revision of the record (a restart, a replace) is read with its password afresh.
  if (revisionSeen(adapter)) deps.secrets.forget?.(adapter.auth.password);
  return adapter;
};

/**
 * The adapter's password. The resolver's failures are problems already (503 store down, 500
 * missing secret or `$ENC` value); none carries the secret.
 */
const passwordOf = async (adapter: Adapter, deps: RelayDeps, forgetAdapter: () => void): Promise<string> => {
  try {
    return await deps.secrets.resolve(adapter.auth.password);
  } catch (error) {
    // A reference to a missing or unusable secret may be a stale adapter's: the adapter may
    // name another secret by now (its old, generated one is deleted when it does).
    if (error instanceof HttpProblem && error.status === 500) forgetAdapter();
    throw error;
  }
};

/** The call's time limit: the adapter's, within what the function has left (measured after the lookups). */
const callTimeoutMs = (adapter: Adapter, deps: RelayDeps, limits: RelayLimits): number => {
  const budget = deps.remainingTimeMs() - limits.safetyMarginMs;
  const timeoutMs = Math.min(adapter.timeoutMs ?? limits.defaultTimeoutMs, budget);
  if (timeoutMs < limits.minimumTimeoutMs) {
    throw new RelayFailure(new GatewayTimeout(`The function had no time left to call the orchestrator of adapter '${adapter.name}'.`), 'no-time');
  }
  return timeoutMs;
};

/** The request sent to the orchestrator, and every value of it that must never reach a log. */
const outboundRequestFor = (
  input: RelayInput,
  checked: CheckedRequest,
  call: {
    readonly adapter: Adapter;
    readonly password: string;
    readonly target: OutboundRequest['target'];
    readonly timeoutMs: number;
    readonly limits: RelayLimits;
  },
): { outbound: OutboundRequest; secrets: string[] } => {
  const { adapter, password, target, timeoutMs, limits } = call;
  const withBody = METHODS_WITH_BODY.has(checked.method);
  const headers: Record<string, string> = {
    Accept: checked.accept,
    Authorization: `Basic ${Buffer.from(`${adapter.auth.username}:${password}`, 'utf8').toString('base64')}`,
    ...(withBody && checked.contentType ? { 'Content-Type': checked.contentType } : {}),
  };
  const outbound: OutboundRequest = {
    target,
    method: checked.method,
    headers,
    ...(withBody ? { body: JSON.stringify(input.request.body) } : {}),
    timeoutMs,
    maxBodyBytes: limits.maxBodyBytes,
    ...(input.signal ? { signal: input.signal } : {}),
  };
  // The password, and the credentials of the Authorization header.
  return { outbound, secrets: [password, headers['Authorization']!.slice('Basic '.length)] };
};

/** Sends the request once; a failure to get an answer becomes the relay's problem. The line gets the time it took (and the exchange, when logged). */
const sendOnce = async (
  adapter: Adapter,
  outbound: OutboundRequest,
  deps: RelayDeps,
  call: {
    readonly line: CallLine;
    readonly exchange: ExchangeLog | undefined;
    readonly secrets: string[];
    readonly now: () => number;
    readonly forgetAdapter: () => void;
  },
): Promise<OutboundResponse> => {
  const { line, exchange, secrets, now, forgetAdapter } = call;
  const sendStarted = now();
  let response: OutboundResponse | undefined;
  try {
    const send = () => deps.client.send(outbound);
    response = await (deps.traceCall ? deps.traceCall(adapter.name, outbound, send) : send());
    return response;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (STALE_ADAPTER_FAILURES.has(error.failure)) forgetAdapter();
    throw new RelayFailure(outboundProblem(adapter.name, error, outbound.timeoutMs), error.failure, error.code);
  } finally {
    line.upstreamMs = Math.round(now() - sendStarted);
    if (exchange) line.exchange = withAnswer(exchange, response, line.upstreamMs, line.logLevel === 'trace' ? secrets : undefined);
  }
};

/** The results of the orchestrator's answer; refused when it is a redirect or too large to return. */
const resultsOf = (adapter: Adapter, response: OutboundResponse, deps: RelayDeps, forgetAdapter: () => void): RestActionResult[] => {
  // The password may have been rotated since it was cached, or the adapter changed (another
  // user name, another secret): read both afresh next time.
  if (response.status === 401) {
    deps.secrets.forget?.(adapter.auth.password);
    forgetAdapter();
  }
  // Never followed: a Location could point the relay at another host.
  if (response.status >= 300 && response.status < 400) {
    throw new RelayFailure(
      new BadGateway(
        `The orchestrator of adapter '${adapter.name}' answered with a redirect (${response.status}), which the relay does not follow.`,
      ).afterSending(),
      'redirect',
    );
  }
  const results = [{ result: String(response.status), ...answerData(adapter.name, response) }];
  const mayNotFit = response.body.length * MAX_RESULT_GROWTH + RESULT_ENVELOPE_BYTES > MAX_LAMBDA_RESPONSE_BYTES;
  if (mayNotFit && !fitsLambdaResponse(results)) {
    throw new RelayFailure(
      new BadGateway(`The orchestrator of adapter '${adapter.name}' answered with a body too large to return.`).afterSending(),
      'too-large',
    );
  }
  return results;
};

/**
 * Relays one REST action. Resolves to the results when the orchestrator answered, whatever
 * its status; throws an {@link HttpProblem} otherwise (400 invalid request, 404 unknown
 * adapter, 502 bad or no answer, 504 no answer in time).
 */
export const relayRestAction = async (input: RelayInput, deps: RelayDeps): Promise<RestActionResult[]> => {
  const now = deps.now ?? Date.now;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const started = now();
  const method = (input.request.params.method?.toUpperCase() ?? DEFAULT_METHOD) as RelayMethod;
  const line: CallLine = { status: 500, outcome: 'error', logLevel: 'info' };
  const pathProblem = checkRelayPath(input.request.params.path);
  try {
    const checked = checkParams(input.request, pathProblem);
    const adapter = await runningAdapter(input.adapterId, deps, line);
    const forgetAdapter = (): void => deps.adapters.forget?.(adapter.name);
    // `checkParams` refused any path `checkRelayPath` refuses: only the URL check is left.
    const target = targetOnOrigin(originOf(adapter), checked.path);
    if (!target) {
      throw new BadRequest('The request is invalid: params.path is not a path the relay can send unchanged.', [
        { in: 'body', field: 'params.path', message: 'is not a path the relay can send unchanged' },
      ]);
    }
    const password = await passwordOf(adapter, deps, forgetAdapter);
    const timeoutMs = callTimeoutMs(adapter, deps, limits);
    const { outbound, secrets } = outboundRequestFor(input, checked, { adapter, password, target, timeoutMs, limits });
    const exchange = passes('debug', line.logLevel) ? exchangeLog(checked, outbound, line.logLevel === 'trace' ? secrets : undefined) : undefined;
    const response = await sendOnce(adapter, outbound, deps, { line, exchange, secrets, now, forgetAdapter });
    line.upstreamStatus = response.status;
    const results = resultsOf(adapter, response, deps, forgetAdapter);
    line.status = 200;
    line.outcome = 'answered';
    return results;
  } catch (error) {
    const failure = error instanceof RelayFailure ? error : undefined;
    const problem = failure?.problem ?? (error instanceof HttpProblem ? error : undefined) ?? afterAnswer(line, input.adapterId, error);
    line.status = problem?.status ?? 500;
    line.outcome = failure?.outcome ?? (problem?.status === 400 ? 'invalid' : 'error');
    if (failure?.errorCode) line.errorCode = failure.errorCode;
    throw problem ?? error;
  } finally {
    deps.log({
      adapter: input.adapterId,
      method,
      ...logPath(input.request.params.path, pathProblem !== undefined),
      ...line,
      durationMs: Math.round(now() - started),
    });
  }
};

/**
 * Lambda refuses a synchronous response over 6 MB (6,291,456 bytes). The proxy result carries
 * our JSON as a string inside JSON, so quotes and backslashes are escaped twice and a 4 MiB
 * orchestrator body can grow past the limit: measure the real thing, with room for the
 * status code and headers.
 */
export const MAX_LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024 - 16 * 1024;

export const fitsLambdaResponse = (results: unknown, limit = MAX_LAMBDA_RESPONSE_BYTES): boolean =>
  Buffer.byteLength(JSON.stringify(JSON.stringify(results))) <= limit;
