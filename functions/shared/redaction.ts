/**
 * The one redaction rule of the service: what no reader ever sees of a secret, whether the
 * text is a log line, a relay trace body, a compliance report or any other view of a device
 * configuration. Masked for every reader, whatever their role:
 *
 * - the value of every member, XML element or attribute, `name=value` pair, `name: value`
 *   header or line, and CLI statement (`enable secret 5 …`, `snmp-server community X RO`,
 *   `encrypted-password "…";`) whose name suggests a secret ({@link isSecretField});
 * - every value in a device-encrypted or hashed form (`$1$…`, `$5$…`, `$6$…`, `$8$…`, `$9$…`
 *   and the other crypt-style `$id$…` forms: IOS types 5, 8 and 9, NX-OS type 5, IOS-XR
 *   type 10, Junos `$9$` and `$6$`);
 * - every known secret value a caller passes (the relay passes the adapter's password and
 *   credentials), in every spelling a reader could decode.
 *
 * A masked value reads {@link REDACTED}: one fixed marker, nothing derived from the value (no
 * length, no hash a guess could be checked against).
 */
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
 * (`password="x"`), and JSON-looking members (`"password": x`, whatever x is, in text that does
 * not parse) named like secrets.
 */
const XML_ELEMENT = /<((?:[\w.-]+:)?([\w.-]+))(\s[^>]*)?>(<!\[CDATA\[[\s\S]*?\]\]>|[^<]*)<\/\1>/g;
const XML_ATTRIBUTE = /(\s)((?:[\w.-]+:)?([\w.-]+))(\s*=\s*)("[^"]*"|'[^']*')/g;
const JSON_NAME = /"((?:[^"\\]|\\.)*)"\s*:\s*/g;

/**
 * Where the JSON-looking value starting at `start` ends: after its closing quote, its matching
 * bracket (strings inside skipped), or its last scalar character; the end of the text when it
 * is not closed (a body cut short).
 */
export const jsonValueEnd = (text: string, start: number): number => {
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

/**
 * A name, wherever a name may stand (after any character that cannot be part of one: a blank,
 * `?`, `&`, `;`, `>`, `"`, `,`, `:`, `+`, a `%XX` escape…), perhaps closed by an escaped quote
 * (group 2: `\"password\":` in JSON held in a string, `%22` URL-encoded), and what introduces
 * its value (a lookahead, so that the next name may start right after it):
 * `=` or `%3D` (group 3: a pair, as in a query, a form or a cookie); or `:`, `%3A`, a blank, `+`,
 * `%20` or `%09` (group 4: a header, a YAML-like line or a CLI statement such as
 * `enable secret 5 …`, `snmp-server community X RO`, `encrypted-password "…";`). The name of an
 * XML tag (`<ns:secret a="1">`) is no statement: its element is masked whole.
 */
const NAME_THEN_VALUE = /(?<![\w.[\]-]|<\/?(?:[\w.-]+:)?)([\w.[\]-]+)(?=((?:\\+"|%22)?)(?:([ \t]*(?:=|%3D)[ \t]*)|((?:[ \t]*(?::|%3A)|[ \t]|\+|%20|%09)(?:[ \t]|\+|%20|%09)*)))/gi;
/** A value that is a marker already: masking twice changes nothing. */
const MASKED = /^(?:"\[redacted\]"|'\[redacted\]'|\[redacted\])$/;

/**
 * Where a pair's value starting at `start` ends: before the next `&`, `;` or blank outside
 * quotes (escaped quotes included: `\"a b\"`), at the end of the text when a quote is not closed.
 */
const pairValueEnd = (text: string, start: number): number => {
  let from = start;
  const quote = /^\\*["']/.exec(text.slice(start))?.[0];
  if (quote) {
    const close = text.indexOf(quote, start + quote.length);
    if (close < 0) return text.length;
    from = close + quote.length;
  }
  const end = text.slice(from).search(/[&;\s]/);
  return end < 0 ? text.length : from + end;
};

/**
 * Where a statement's value starting at `start` ends: at the end of its line. A device secret
 * may hold any other character (`;`, `&`, `"`, `%0A` and `\n` as text), so no other character
 * can be taken for its end: the rest of the line is masked with it.
 */
const lineValueEnd = (text: string, start: number): number => {
  const end = text.slice(start).search(/[\r\n]/);
  return end < 0 ? text.length : start + end;
};

/** Every value a name like a secret introduces ({@link NAME_THEN_VALUE}), as {@link REDACTED}. */
const redactNamedValues = (text: string): string => {
  let out = '';
  let from = 0;
  for (const match of text.matchAll(NAME_THEN_VALUE)) {
    if (match.index < from || !isSecretField(match[1]!)) continue;
    const pair = match[3] !== undefined;
    const start = match.index + match[1]!.length + match[2]!.length + (pair ? match[3]! : match[4]!).length;
    const end = pair ? pairValueEnd(text, start) : lineValueEnd(text, start);
    const value = text.slice(start, end);
    // A statement with nothing after its name hides nothing; an empty pair is masked all the same.
    if (MASKED.test(value) || (!pair && value.trim() === '')) continue;
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
};

/**
 * Values in a device-encrypted or hashed form: `$id$…` as crypt(3) writes them (`$1$` MD5, IOS
 * type 5; `$5$`/`$6$` SHA-256/512, NX-OS type 5 and IOS-XR type 10; `$8$` PBKDF2 and `$9$`
 * scrypt, IOS types 8 and 9; `$2b$` bcrypt…) and Junos `$9$`, `$` also percent-encoded.
 */
const ENCRYPTED_FORM = /(?:\$|%24)[a-z0-9]{1,10}(?:\$|%24)[\w./+=$%-]*/gi;

/**
 * The values a text names like secrets (XML elements and attributes, JSON-looking members,
 * pairs, headers and CLI statements) and its values in device-encrypted forms.
 */
const redactNamed = (text: string): string => {
  let out = text.replace(ENCRYPTED_FORM, REDACTED);
  // No name like a secret anywhere: nothing more to look for (most strings).
  if (!SECRET_FIELD.test(out)) return out;
  out = out.replace(XML_ELEMENT, (whole, tag: string, local: string, attributes: string | undefined) =>
    isSecretField(local) ? `<${tag}${attributes ?? ''}>${REDACTED}</${tag}>` : whole,
  );
  out = out.replace(XML_ATTRIBUTE, (whole, lead: string, name: string, local: string, equals: string, value: string) =>
    isSecretField(local) ? `${lead}${name}${equals}${value[0]}${REDACTED}${value[0]}` : whole,
  );
  return redactNamedValues(redactJsonMembers(out));
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

/**
 * A value found at `path` (the member names and indexes from the root) of a device
 * configuration, as any reader may see it: all of it when a member on the path is named like a
 * secret, else {@link redact}ed. Compliance reports, and every later view of a configuration,
 * show values through this.
 */
export const redactAt = (path: readonly string[], value: unknown, options?: RedactOptions): unknown =>
  path.some(isSecretField) ? REDACTED : redact(value, options);

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

