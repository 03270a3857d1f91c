/**
 * Structured JSON logs: one line per entry, with the API Gateway request id as correlation
 * id on every line. Every field is redacted before writing by the service's one redaction rule
 * (redaction.ts), as a last line of defence: callers must not pass secrets in the first place.
 */
import { optionalEnv } from './env.js';
import { redact } from './redaction.js';

/** Every level, least verbose first. `trace` is only ever set per adapter (the relay's call bodies). */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const ORDER: Record<LogLevel, number> = { trace: 5, debug: 10, info: 20, warn: 30, error: 40 };
/** The levels `LOG_LEVEL` takes (the container's own lines have no `trace`). */
const CONTAINER_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** True for the name of a level (its own name only: `toString` and the like are not levels). */
export const isLogLevel = (value: unknown): value is LogLevel => typeof value === 'string' && Object.hasOwn(ORDER, value);

/** True when a line of `level` is written under `threshold` (`debug` passes `trace` and `debug`). */
export const passes = (level: LogLevel, threshold: LogLevel): boolean => ORDER[level] >= ORDER[threshold];

/** At most `limit` UTF-16 code units of `text`, never cutting a surrogate pair in half. */
export const truncateText = (text: string, limit: number): { readonly text: string; readonly truncated: boolean } => {
  if (text.length <= limit) return { text, truncated: false };
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
};

type Fields = Record<string, unknown>;

const parseLevel = (raw: string): LogLevel => {
  const level = raw.toLowerCase();
  if ((CONTAINER_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new Error(`configuration error: LOG_LEVEL must be one of ${CONTAINER_LEVELS.join(', ')}, got ${raw}`);
};

export class Logger {
  #context: Fields = {};
  readonly #service: string;
  #level: LogLevel;

  constructor(
    service = optionalEnv('SERVICE_NAME', 'netconfig'),
    level: LogLevel = parseLevel(optionalEnv('LOG_LEVEL', 'info')),
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {
    this.#service = service;
    this.#level = level;
  }

  /** Sets the per-invocation fields (correlation id, operation); replaces the previous ones. */
  setContext(context: Fields): void {
    this.#context = context;
  }

  setLevel(level: LogLevel): void {
    this.#level = level;
  }

  trace(message: string, fields?: Fields): void {
    this.log('trace', message, fields);
  }
  debug(message: string, fields?: Fields): void {
    this.log('debug', message, fields);
  }
  info(message: string, fields?: Fields): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Fields): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Fields): void {
    this.log('error', message, fields);
  }

  /**
   * Writes a line of `level` when it passes `threshold`, by default the container's level. A
   * caller with its own level (the relay, per adapter) passes it as `threshold`.
   */
  log(level: LogLevel, message: string, fields?: Fields, threshold: LogLevel = this.#level): void {
    if (!passes(level, threshold)) return;
    const entry = {
      level,
      timestamp: new Date().toISOString(),
      service: this.#service,
      message,
      ...this.#context,
      ...(fields ? (redact(fields) as Fields) : {}),
    };
    this.write(`${JSON.stringify(entry)}\n`);
  }
}

/** The container's logger. */
export const logger = new Logger();
