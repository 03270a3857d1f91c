/**
 * Structured JSON logs: one line per entry, with the API Gateway request id as correlation
 * id on every line. Fields whose names suggest a secret are redacted before writing, as a
 * last line of defence: callers must not pass secrets in the first place.
 */
import { optionalEnv } from './env.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEY = /pass(word)?|secret|token|authorization|credential|cookie/i;

type Fields = Record<string, unknown>;

const parseLevel = (raw: string): LogLevel => {
  const level = raw.toLowerCase();
  if (level in ORDER) return level as LogLevel;
  throw new Error(`configuration error: LOG_LEVEL must be one of ${Object.keys(ORDER).join(', ')}, got ${raw}`);
};

const redact = (value: unknown, depth = 0): unknown => {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Fields = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
};

export class Logger {
  #context: Fields = {};
  readonly #service: string;
  #level: number;

  constructor(
    service = optionalEnv('SERVICE_NAME', 'netconfig'),
    level: LogLevel = parseLevel(optionalEnv('LOG_LEVEL', 'info')),
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {
    this.#service = service;
    this.#level = ORDER[level];
  }

  /** Sets the per-invocation fields (correlation id, operation); replaces the previous ones. */
  setContext(context: Fields): void {
    this.#context = context;
  }

  setLevel(level: LogLevel): void {
    this.#level = ORDER[level];
  }

  debug(message: string, fields?: Fields): void {
    this.#log('debug', message, fields);
  }
  info(message: string, fields?: Fields): void {
    this.#log('info', message, fields);
  }
  warn(message: string, fields?: Fields): void {
    this.#log('warn', message, fields);
  }
  error(message: string, fields?: Fields): void {
    this.#log('error', message, fields);
  }

  #log(level: LogLevel, message: string, fields?: Fields): void {
    if (ORDER[level] < this.#level) return;
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
