/**
 * Structured JSON logs: one line per entry, with the API Gateway request id as correlation
 * id on every line. Fields whose names suggest a secret are redacted before writing, as a
 * last line of defence: callers must not pass secrets in the first place.
 *
 * The redaction is exported too ({@link redact}, {@link redactText}, {@link isSecretField}):
 * the relay uses it on the bodies it logs at `trace`, with the secret values a call used.
 */
import { optionalEnv } from './env.js';

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

/**
 * Field names that suggest a secret, case-insensitively: any name containing `pass`, `secret`,
 * `token`, `credential`, `authorization`/`authorisation`, `cookie` or `community` (an SNMP
 * community string is a device's password), any name with `key` not followed by a letter (`key`,
 * `apiKey`, `private-key`, `ssh_key_data`; not `keyboard` or `queryKeys`), and `psk`
 * (`ike-psk`, `pskValue`; a pre-shared key).
 */
const SECRET_FIELD = /pass|secret|token|credential|authori[sz]ation|cookie|community|key(?![a-z])|psk/i;

export const isSecretField = (name: string): boolean => SECRET_FIELD.test(name);

export const REDACTED = '[redacted]';
/** What stands for a value nested deeper than the redaction walks (never the value itself). */
export const TOO_DEEP = '[nested too deep]';
const DEFAULT_MAX_DEPTH = 32;

export interface RedactOptions {
  /**
   * Secret values to remove wherever they appear inside strings (and their JSON-escaped,
   * percent-encoded and base64 forms); empty strings are ignored.
   */
  readonly secrets?: readonly string[];
  /** Levels of nesting walked; anything deeper becomes {@link TOO_DEEP}. Default 32. */
  readonly maxDepth?: number;
}

/** XML/HTML text escaping, with the quote escapes an attribute value takes (`&quot;`/`&#34;`, `&apos;`/`&#39;`) or none. */
const xmlEscapes = (text: string): string[] => {
  const base = text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  return [base, base.replaceAll('"', '&quot;').replaceAll("'", '&apos;'), base.replaceAll('"', '&#34;').replaceAll("'", '&#39;'), base.replaceAll('"', '&quot;').replaceAll("'", '&#39;')];
};

/** Percent-encodings of a text: as `encodeURIComponent` and as a form (`+` for space, `!'()~` encoded), each with upper- and lower-case hex digits. */
const percentEncodings = (text: string): string[] => {
  let component: string;
  try {
    component = encodeURIComponent(text);
  } catch {
    // A lone surrogate has no percent-encoding: nothing to look for.
    return [];
  }
  const form = new URLSearchParams({ v: text }).toString().slice(2);
  const lower = (encoded: string) => encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
  return [component, lower(component), form, lower(form)];
};

/**
 * Every spelling of a secret that may show up in a text and that {@link redactText} rewrites: as
 * is, JSON-escaped (also with `\/`), percent- and form-encoded (either hex case), XML-escaped,
 * base64. Other spellings are caught by {@link holdsSecret}.
 */
const spellings = (secrets: readonly string[]): string[] => {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    forms.add(secret);
    const json = JSON.stringify(secret).slice(1, -1);
    forms.add(json);
    forms.add(json.replaceAll('/', '\\/'));
    for (const encoded of percentEncodings(secret)) forms.add(encoded);
    for (const escaped of xmlEscapes(secret)) forms.add(escaped);
    forms.add(Buffer.from(secret, 'utf8').toString('base64'));
  }
  // Longest first: a secret containing another is removed whole.
  return [...forms].filter(Boolean).sort((a, b) => b.length - a.length);
};

const ENTITY_CHARS: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A text as its reader could decode it: percent-decoded (`+` as space), entity-decoded, JSON-unescaped, and each base64-looking run decoded. */
const decodedViews = (text: string): string[] => {
  // Byte by byte, as a lenient reader decodes: a byte that is not UTF-8 (`%ff`) becomes U+FFFD and
  // leaves the rest of its run decoded (`decodeURIComponent` would refuse the whole run).
  const percent = text.replaceAll('+', ' ').replace(/(?:%[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
  const entities = text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|amp|lt|gt|quot|apos);/gi, (whole, entity: string) => {
    if (entity[0] !== '#') return ENTITY_CHARS[entity.toLowerCase()] ?? whole;
    const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
  const json = text.replace(/\\u([0-9a-f]{4})|\\(.)/gi, (_, hex: string | undefined, escaped: string) => (hex ? String.fromCharCode(parseInt(hex, 16)) : escaped));
  const base64 = [...text.matchAll(/[A-Za-z0-9+/_-]{8,}={0,2}/g)].map((run) => Buffer.from(run[0], 'base64').toString('utf8'));
  return [text, percent, entities, json, ...base64];
};

/**
 * True when a text still holds one of `secrets` as a reader could decode it (percent, entities,
 * JSON escapes, base64, or a mix of these the redaction did not rewrite): the relay then logs
 * {@link WITHHELD} instead of the text.
 */
export const holdsSecret = (text: string, secrets: readonly string[]): boolean => {
  const known = secrets.filter((secret) => secret !== '');
  if (known.length === 0) return false;
  return decodedViews(text).some((view) => known.some((secret) => view.includes(secret)));
};

/** What a logged text becomes when a known secret is still in it after redaction. */
export const WITHHELD = '[withheld: holds a known secret in an encoding the redaction does not rewrite]';

/**
 * XML elements (`<remote-password>x</remote-password>`, CDATA content too) and attributes
 * (`password="x"`), form or query pairs (`token=x`) and JSON-looking members (`"password": x`,
 * whatever x is, in text that does not parse) named like secrets.
 */
const XML_ELEMENT = /<((?:[\w.-]+:)?([\w.-]+))(\s[^>]*)?>(<!\[CDATA\[[\s\S]*?\]\]>|[^<]*)<\/\1>/g;
const XML_ATTRIBUTE = /(\s)((?:[\w.-]+:)?([\w.-]+))(\s*=\s*)("[^"]*"|'[^']*')/g;
const FORM_PAIR = /(^|[?&;\s])([\w.[\]-]+)=([^&;\s]*)/g;
const JSON_NAME = /"((?:[^"\\]|\\.)*)"\s*:\s*/g;

/**
 * Where the JSON-looking value starting at `start` ends: after its closing quote, its matching
 * bracket (strings inside skipped), or its last scalar character; the end of the text when it
 * is not closed (a body cut short).
 */
const jsonValueEnd = (text: string, start: number): number => {
  const first = text[start];
  if (first === '"') {
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i + 1;
    }
    return text.length;
  }
  if (first === '[' || first === '{') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = jsonValueEnd(text, i) - 1;
      else if (c === '[' || c === '{') depth++;
      else if ((c === ']' || c === '}') && --depth === 0) return i + 1;
    }
    return text.length;
  }
  const end = text.slice(start).search(/[,}\]\s]/);
  return end < 0 ? text.length : start + end;
};

/** JSON-looking members named like secrets with their values, whatever they are, as `[redacted]`. */
const redactJsonMembers = (text: string): string => {
  let out = '';
  let from = 0;
  for (const match of text.matchAll(JSON_NAME)) {
    const valueStart = match.index + match[0].length;
    if (valueStart < from || !isSecretField(match[1]!) || valueStart >= text.length) continue;
    const end = jsonValueEnd(text, valueStart);
    if (end === valueStart) continue;
    out += text.slice(from, valueStart) + (text[valueStart] === '"' ? `"${REDACTED}"` : REDACTED);
    from = end;
  }
  return out + text.slice(from);
};

/**
 * A text with every known secret removed, and the values of XML elements and attributes,
 * `name=value` pairs and JSON-looking members whose names suggest a secret (a body that is not
 * JSON, or JSON that does not parse). A text that still holds a known secret in another
 * encoding ({@link holdsSecret}) becomes {@link WITHHELD} as a whole.
 */
export const redactText = (text: string, secrets: readonly string[] = []): string => {
  let out = text;
  for (const form of spellings(secrets)) out = out.split(form).join(REDACTED);
  out = redactNamed(out);
  return holdsSecret(out, secrets) ? WITHHELD : out;
};

/** The values of XML elements and attributes, JSON-looking members and `name=value` pairs named like secrets. */
const redactNamed = (text: string): string => {
  // No name like a secret anywhere: nothing to look for (most strings).
  if (!SECRET_FIELD.test(text)) return text;
  let out = text.replace(XML_ELEMENT, (whole, tag: string, local: string, attributes: string | undefined) =>
    isSecretField(local) ? `<${tag}${attributes ?? ''}>${REDACTED}</${tag}>` : whole,
  );
  out = out.replace(XML_ATTRIBUTE, (whole, lead: string, name: string, local: string, equals: string, value: string) =>
    isSecretField(local) ? `${lead}${name}${equals}${value[0]}${REDACTED}${value[0]}` : whole,
  );
  out = redactJsonMembers(out);
  return out.replace(FORM_PAIR, (whole, lead: string, name: string, value: string) =>
    isSecretField(name) && !/^(?:"\[redacted\]"|'\[redacted\]'|\[redacted\])$/.test(value) ? `${lead}${name}=${REDACTED}` : whole,
  );
};

/**
 * A string inside a value: the known secrets removed, and the values named like secrets in the
 * text it may hold (a JSON document, XML or a query string inside a JSON string member).
 */
const redactString = (text: string, forms: readonly string[]): string => {
  let out = text;
  for (const form of forms) out = out.split(form).join(REDACTED);
  return redactNamed(out);
};

/**
 * A copy of `value` safe to log: members named like secrets ({@link isSecretField}) at any depth
 * become `[redacted]`, known secret values and the values a text names like secrets (`token=x`,
 * `<password>x</password>`) are removed from every string, keys included, an error becomes its
 * name and message, and anything nested deeper than `maxDepth` becomes
 * `[nested too deep]`. The value given is not changed.
 */
export const redact = (value: unknown, options: RedactOptions = {}): unknown =>
  walk(value, spellings(options.secrets ?? []), options.maxDepth ?? DEFAULT_MAX_DEPTH, 0);

const walk = (value: unknown, forms: readonly string[], maxDepth: number, depth: number): unknown => {
  if (typeof value === 'string') return redactString(value, forms);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= maxDepth) return TOO_DEEP;
  if (value instanceof Error) return { name: value.name, message: redactString(value.message, forms) };
  if (Array.isArray(value)) return value.map((v) => walk(v, forms, maxDepth, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[redactString(k, forms)] = isSecretField(k) ? REDACTED : walk(v, forms, maxDepth, depth + 1);
  }
  return out;
};

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
