/**
 * The one redaction rule of the service: what no reader ever sees of a secret, whether the
 * text is a log line, a relay trace body, a compliance report or any other view of a device
 * configuration. Masked for every reader, whatever their role:
 *
 * - the value of every member, XML element or attribute, `name=value` pair, `name: value`
 *   header or line, and CLI statement (`enable secret 5 …`, `snmp-server community X RO`,
 *   `encrypted-password "…";`) whose name suggests a secret ({@link isSecretField});
 * - the text of the whole subtree of an XML element named like a secret, a community after
 *   `snmp-server host <address>`, SNMPv3 passphrases after `auth`/`priv` statements, the
 *   password of a URL's user information, and all of these inside percent-encoded runs;
 * - in a diff of CLI text ({@link redactCliDiff}), every line nested in a block whose statement
 *   is named like a secret, and the community of `host <address> …` inside `snmp-server`;
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
 * `apiKey`, `private-key`, `ssh_key_data`; not `keyboard` or `queryKeys`), `psk` (`ike-psk`,
 * `pskValue`; a pre-shared key). Invisible characters inside a name (`pass\u200Bword`) are not
 * part of it.
 */
const SECRET_FIELD = /pass|secret|token|credential|authori[sz]ation|cookie|community|key(?![a-z])|psk/i;
/**
 * Statement names whose value is a secret in a CLI line only (a blank after the name): SNMPv3's
 * `auth sha <pass> priv aes 128 <pass>`. As member names they are no secret (a record's `auth`
 * holds a username; NSO's `"auth":{"sha":{"password":…}}` names its secret below).
 */
const SECRET_STATEMENT = /^(?:auth|priv)$/i;
/** What a text must hold (once its invisible characters are gone) for any name in it to be like a secret. */
const SECRET_HINT = /pass|secret|token|credential|auth|cookie|community|key|psk|priv/i;
/** Characters a reader does not see (format characters: zero-width, bidirectional controls, soft hyphen, BOM). */
const INVISIBLE = String.raw`\p{Cf}`;
const INVISIBLES = new RegExp(INVISIBLE, 'gu');
/** A text as it reads: its invisible characters removed. */
const visible = (text: string): string => text.replace(INVISIBLES, '');

/** True when `name`, read without its invisible characters, suggests a secret ({@link SECRET_FIELD}). */
export const isSecretField = (name: string): boolean => SECRET_FIELD.test(visible(name));

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
  return [
    base,
    base.replaceAll('"', '&quot;').replaceAll("'", '&apos;'),
    base.replaceAll('"', '&#34;').replaceAll("'", '&#39;'),
    base.replaceAll('"', '&quot;').replaceAll("'", '&#39;'),
  ];
};

/** Percent-encodings of a text: as `encodeURIComponent` and as a form (`+` for space, `!'()~` encoded), each with upper- and lower-case hex digits. */
const percentEncodings = (text: string): string[] => {
  let component: string;
  try {
    component = encodeURIComponent(text);
  } catch {
    // A lone surrogate has no percent-encoding: nothing to look for.
    // Mutation: the placeholder list `["Stryker was here"]` survives: only a text holding the mutation tool's own
    // words would be redacted differently.
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
    // Mutation: equivalent with `.filter(Boolean)` below (→ `false`, or another text): an empty secret has only empty
    // spellings, so either guard alone keeps them out.
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
  // Mutation: the filter removed is equivalent: `if (secret === '') continue` above already keeps empty spellings
  // out.
  return [...forms].filter(Boolean).sort((a, b) => b.length - a.length);
};

/**
 * A text as a lenient reader percent-decodes it (`+` as a space), byte by byte: a byte that is not
 * UTF-8 (`%ff`) becomes U+FFFD and leaves the rest of its run decoded (`decodeURIComponent` would
 * refuse the whole run).
 */
const percentDecoded = (text: string): string =>
  text.replaceAll('+', ' ').replace(/(?:%[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));

const ENTITY_CHARS: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A text as its reader could decode it: percent-decoded (`+` as space), entity-decoded, JSON-unescaped, and each base64-looking run decoded. */
const decodedViews = (text: string): string[] => {
  const percent = percentDecoded(text);
  const entities = text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|amp|lt|gt|quot|apos);/gi, (whole, entity: string) => {
    if (entity[0] !== '#') return ENTITY_CHARS[entity.toLowerCase()] ?? whole;
    const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
  const json = text.replace(/\\u([0-9a-f]{4})|\\(.)/gi, (_, hex: string | undefined, escaped: string) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : escaped,
  );
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
  // Mutation: → `false` is equivalent: with no secret, `known.some(…)` is false anyway (the line only saves decoding
  // the text).
  if (known.length === 0) return false;
  return decodedViews(text).some((view) => known.some((secret) => view.includes(secret)));
};

/** What a logged text becomes when a known secret is still in it after redaction. */
export const WITHHELD = '[withheld: holds a known secret in an encoding the redaction does not rewrite]';

/** XML attributes named like secrets (`password="x"`). */
const XML_ATTRIBUTE = /(\s)((?:[\w.-]+:)?([\w.-]+))(\s*=\s*)("[^"]*"|'[^']*')/g;
/** An XML start tag: qualified name, local name, attributes. No `<` inside: a match never runs past the next tag. */
const XML_START = /<((?:[\w.-]+:)?([\w.-]+))(\s[^<>]*)?>/g;

/**
 * The content of an element named like a secret as shown: every text run and CDATA section
 * masked, the child tags kept (`<value>[redacted]</value>`); an empty content masked all the same.
 * Scanned once, so that an unclosed CDATA section or tag costs no more than the rest of the text.
 */
const maskedContent = (content: string): string => {
  let out = '';
  for (let i = 0; i < content.length; ) {
    const tagEnd = content[i] === '<' && !content.startsWith('<![CDATA[', i) ? content.indexOf('>', i) : -1;
    if (tagEnd >= 0) {
      out += content.slice(i, tagEnd + 1);
      i = tagEnd + 1;
      continue;
    }
    const cdataEnd = content.startsWith('<![CDATA[', i) ? content.indexOf(']]>', i) : -1;
    const next = content.startsWith('<![CDATA[', i) ? (cdataEnd < 0 ? content.length : cdataEnd + 3) : content.indexOf('<', i + 1);
    const end = next < 0 ? content.length : next;
    const run = content.slice(i, end);
    out += run.trim() === '' ? run : REDACTED;
    i = end;
  }
  return out.trim() === '' ? REDACTED : out;
};

/**
 * Where the element named `tag` whose start tag ends at `from` closes (nested elements of the
 * same name counted): where its end tag starts and ends; the end of the text when it is not
 * closed (a body cut short).
 */
const elementEnd = (text: string, tag: string, from: number): { contentEnd: number; end: number } => {
  const tags = new RegExp(`<(/?)${tag.replaceAll('.', '\\.')}(?=[\\s/>])[^<>]*>`, 'g');
  tags.lastIndex = from;
  let depth = 1;
  for (let m = tags.exec(text); m; m = tags.exec(text)) {
    if (m[1] && --depth === 0) return { contentEnd: m.index, end: m.index + m[0].length };
    if (!m[1] && !m[0].endsWith('/>')) depth++;
  }
  return { contentEnd: text.length, end: text.length };
};

/**
 * XML elements named like secrets with the text of their whole subtree masked: a leaf
 * (`<remote-password>x</remote-password>`, CDATA too), and a secret held by a child
 * (`<password><value>x</value></password>`, Junos `<community><name>x</name>…</community>`).
 */
const redactXmlElements = (text: string): string => {
  let out = '';
  let from = 0;
  for (const match of text.matchAll(XML_START)) {
    const [start, tag, local, attributes = ''] = match;
    if (match.index < from || !isSecretField(local!) || attributes.endsWith('/')) continue;
    const contentStart = match.index + start.length;
    const { contentEnd, end } = elementEnd(text, tag!, contentStart);
    out += text.slice(from, contentStart) + maskedContent(text.slice(contentStart, contentEnd)) + text.slice(contentEnd, end);
    from = end;
  }
  return out + text.slice(from);
};

/**
 * Where the JSON-looking value starting at `start` ends: after its closing quote, its matching
 * bracket (strings inside skipped), or its last scalar character; the end of the text when it
 * is not closed (a body cut short).
 */
export const jsonValueEnd = (text: string, start: number): number => {
  const first = text[start];
  if (first === '"') {
    // Mutation: `<=` is equivalent (here and in the loop below): the extra step reads `undefined`, no quote, bracket
    // or backslash.
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

/**
 * The first quote at or after a position that no backslash escapes (an even run of backslashes
 * before it), or -1, for positions asked in increasing order: the last answer is reused while it
 * holds, so all questions together read the text once.
 */
const unescapedQuotes = (text: string): ((from: number) => number) => {
  let scannedFrom = Number.POSITIVE_INFINITY;
  let found = -1;
  const escaped = (at: number): boolean => {
    let i = at;
    while (i > 0 && text[i - 1] === '\\') i--;
    return (at - i) % 2 === 1;
  };
  return (from) => {
    if (from >= scannedFrom && (found < 0 || from <= found)) return found;
    let at = text.indexOf('"', from);
    while (at >= 0 && escaped(at)) at = text.indexOf('"', at + 1);
    scannedFrom = from;
    found = at;
    return at;
  };
};

const AFTER_JSON_NAME = /\s*:\s*/y;

/**
 * JSON-looking members named like secrets with their values, whatever they are, as `[redacted]`.
 * Any quote may open a name (a body cut short may start inside a string); the name ends at the
 * next quote no backslash escapes.
 */
const redactJsonMembers = (text: string): string => {
  const nameEnd = unescapedQuotes(text);
  let out = '';
  let from = 0;
  let at = text.indexOf('"');
  let lastEnd = -1;
  let lastValueStart = -1;
  while (at >= 0) {
    const end = nameEnd(at + 1);
    if (end < 0) break;
    // Names sharing an end share what follows it: read once.
    if (end !== lastEnd) {
      AFTER_JSON_NAME.lastIndex = end + 1;
      lastValueStart = AFTER_JSON_NAME.test(text) ? AFTER_JSON_NAME.lastIndex : -1;
      lastEnd = end;
    }
    const valueStart = lastValueStart;
    if (valueStart < 0) {
      at = text.indexOf('"', at + 1);
      continue;
    }
    // Mutation: `>=` → `>` and `< text.length` → `true` are equivalent: a value starting where the last redaction
    // ended, or at the end, starts with a delimiter (or nothing), where `jsonValueEnd` returns the start and
    // `valueEnd > valueStart` skips it.
    if (valueStart >= from && valueStart < text.length && isSecretField(text.slice(at + 1, end))) {
      const valueEnd = jsonValueEnd(text, valueStart);
      if (valueEnd > valueStart) {
        out += text.slice(from, valueStart) + (text[valueStart] === '"' ? `"${REDACTED}"` : REDACTED);
        from = valueEnd;
      }
    }
    at = text.indexOf('"', valueStart);
  }
  return out + text.slice(from);
};

/**
 * A text with every known secret removed, and the values of XML elements and attributes,
 * `name=value` pairs and JSON-looking members whose names suggest a secret (a body that is not
 * JSON, or JSON that does not parse). A text that still holds a known secret in another
 * encoding ({@link holdsSecret}) becomes {@link WITHHELD} as a whole.
 */
// Mutation: the default `[]` → `["Stryker was here"]` survives: only a text holding the mutation tool's own words
// would differ.
export const redactText = (text: string, secrets: readonly string[] = []): string => {
  let out = text;
  for (const form of spellings(secrets)) out = out.split(form).join(REDACTED);
  out = redactNamed(out);
  return holdsSecret(out, secrets) ? WITHHELD : out;
};

/** A blank between a name and its value: any space (no-break, ideographic, U+2028…), `+` or `%20`/`%09` as a form or query writes one. */
const SPACE = String.raw`[\t\p{Zs}\u2028\u2029]`;
const BLANK = String.raw`${SPACE}|\+|%20|%09`;

/**
 * A name, wherever a name may stand (after any character that cannot be part of one: a blank,
 * `?`, `&`, `;`, `>`, `"`, `,`, `:`, `+`, a `%XX` escape…; invisible characters inside it are
 * part of it), perhaps closed by an escaped quote (group 2: `\"password\":` in JSON held in a
 * string, `%22` URL-encoded), and what introduces its value (a lookahead, so that the next name
 * may start right after it): `=` or `%3D` (group 3: a pair, as in a query, a form or a cookie);
 * or `:`, `%3A` or a blank (group 4: a header, a YAML-like line or a CLI statement such as
 * `enable secret 5 …`, `snmp-server community X RO`, `encrypted-password "…";`). The name of an
 * XML tag (`<ns:secret a="1">`) is no statement: its element is masked whole.
 */
const NAME_THEN_VALUE = new RegExp(
  String.raw`(?<![\w.[\]\p{Cf}-]|<\/?(?:[\w.-]+:)?)([\w.[\]\p{Cf}-]+)(?=((?:\\+"|%22)?)(?:(${SPACE}*(?:=|%3D)${SPACE}*)|((?:${SPACE}*(?::|%3A)|${BLANK})(?:${BLANK})*)))`,
  'giu',
);
/**
 * CLI statements whose secret stands at a position rather than after a name: the community of
 * `snmp-server host <address> [traps|informs] [version 1|2c|3 [auth|noauth|priv]] <community> …`
 * (IOS, NX-OS). The rest of the line after the address is the value. A `-` before it is a diff's
 * marker (`-snmp-server host …`), unless a name runs into it (`no-snmp-server`).
 */
const POSITIONAL_STATEMENT = new RegExp(String.raw`(?<![\w.]|[\w.]-)snmp-server(?:${BLANK})+host(?:${BLANK})+(?:(?!${BLANK})\S)+(?:${BLANK})+`, 'giu');
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

/**
 * `text` with the span each match of `pattern` points at ([start, end), or none) as
 * {@link REDACTED}; a match inside a span masked already is passed over.
 */
const maskEach = (text: string, pattern: RegExp, span: (match: RegExpExecArray) => readonly [number, number] | undefined): string => {
  let out = '';
  let from = 0;
  for (const match of text.matchAll(pattern)) {
    const found = match.index < from ? undefined : span(match);
    if (!found) continue;
    out += text.slice(from, found[0]) + REDACTED;
    from = found[1];
  }
  return out + text.slice(from);
};

/** Every value a name like a secret introduces ({@link NAME_THEN_VALUE}), as {@link REDACTED}. */
const redactNamedValues = (text: string): string =>
  maskEach(text, NAME_THEN_VALUE, (match) => {
    const pair = match[3] !== undefined;
    const statement = !pair && match[2] === '' && !/:|%3A/i.test(match[4]!);
    if (!(isSecretField(match[1]!) || (statement && SECRET_STATEMENT.test(visible(match[1]!))))) return undefined;
    const start = match.index + match[1]!.length + match[2]!.length + (pair ? match[3]! : match[4]!).length;
    const end = pair ? pairValueEnd(text, start) : lineValueEnd(text, start);
    const value = text.slice(start, end);
    // A statement with nothing after its name hides nothing; an empty pair is masked all the same.
    return MASKED.test(value) || (!pair && value.trim() === '') ? undefined : [start, end];
  });

/** The rest of the line after each {@link POSITIONAL_STATEMENT}, as {@link REDACTED}. */
const redactPositional = (text: string): string =>
  maskEach(text, POSITIONAL_STATEMENT, (match) => {
    const start = match.index + match[0].length;
    const end = lineValueEnd(text, start);
    const value = text.slice(start, end);
    return MASKED.test(value) || value.trim() === '' ? undefined : [start, end];
  });

/**
 * The start of a URL's authority, `scheme://` (also `\/` as JSON escapes it), and what ends an
 * authority: a blank, `/`, a quote or an angle bracket. Not `?` or `#`: a password written
 * carelessly with one is masked whole. An encoded URL is read decoded ({@link redactEncodedRuns}).
 */
const URL_AUTHORITY = /(?<![a-z0-9+.-])[a-z0-9][a-z0-9+.-]*:(?:\/|\\\/){2}/giu;
const AUTHORITY_END = /[\s/"<>]|\\\//;

/**
 * The password of every URL's user information (`scp://admin:pass@host/`, IOS `archive path`,
 * `copy`, any scheme): from after the user's `:` to the authority's last `@` (a careless `@` in
 * the password included).
 */
const redactUrlPasswords = (text: string): string =>
  maskEach(text, URL_AUTHORITY, (match) => {
    const start = match.index + match[0].length;
    const length = text.slice(start).search(AUTHORITY_END);
    const authority = text.slice(start, length < 0 ? text.length : start + length);
    const at = authority.lastIndexOf('@');
    const colon = authority.indexOf(':');
    if (at < 0 || colon < 0 || colon > at || MASKED.test(authority.slice(colon + 1, at))) return undefined;
    return [start + colon + 1, start + at];
  });

/**
 * Values in a device-encrypted or hashed form: `$id$…` as crypt(3) writes them (`$1$` MD5, IOS
 * type 5; `$5$`/`$6$` SHA-256/512, NX-OS type 5 and IOS-XR type 10; `$8$` PBKDF2 and `$9$`
 * scrypt, IOS types 8 and 9; `$2b$` bcrypt…) and Junos `$9$`, `$` also percent-encoded.
 */
const ENCRYPTED_FORM = /(?:\$|%24)[a-z0-9]{1,10}(?:\$|%24)[\w./+=$%-]*/gi;

/**
 * The values a text names like secrets as it reads (XML elements and attributes, JSON-looking
 * members, pairs, headers and CLI statements, positional statements, URL passwords) and its
 * values in device-encrypted forms.
 */
const redactPlain = (text: string): string => {
  const out = redactPositional(redactUrlPasswords(text.replace(ENCRYPTED_FORM, REDACTED)));
  // No name like a secret anywhere: nothing more to look for (most strings).
  if (!SECRET_HINT.test(visible(out))) return out;
  const attributes = redactXmlElements(out).replace(XML_ATTRIBUTE, (whole, lead: string, name: string, local: string, equals: string, value: string) =>
    isSecretField(local) ? `${lead}${name}${equals}${value[0]}${REDACTED}${value[0]}` : whole,
  );
  return redactNamedValues(redactJsonMembers(attributes));
};

/** The runs a query or a form splits a text into (between `&`, `=`, `?`, `;` and blanks), and what marks one as encoded. */
const QUERY_RUN = /[^\s&=?;]+/g;
const ENCODED = /%[0-9a-f]{2}|\+/i;

/**
 * A text with each percent- or form-encoded run also read as its reader decodes it: a run whose
 * decoded text has something to mask (`cli=%3Cpassword%3E…`, `snmp-server+host+…`) is written
 * again, encoded, from its masked decoded text. Decoded once: a run encoded twice is read as the
 * text its one decoding gives.
 */
const redactEncodedRuns = (text: string): string =>
  text.replace(QUERY_RUN, (run) => {
    if (!ENCODED.test(run)) return run;
    const decoded = percentDecoded(run);
    const masked = redactPlain(decoded);
    if (masked === decoded) return run;
    try {
      return encodeURIComponent(masked).replaceAll(encodeURIComponent(REDACTED), REDACTED);
    } catch {
      // A lone surrogate has no encoding: the run is masked whole.
      return REDACTED;
    }
  });

/** The values a text names like secrets, as written and as its encoded runs decode ({@link redactPlain}). */
const redactNamed = (text: string): string => redactEncodedRuns(redactPlain(text));

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
  // Mutation: `?? []` → `["Stryker was here"]` survives: only a text holding the mutation tool's own words would
  // differ.
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
    // Defined, not assigned: an assignment to a member named `__proto__` would set the copy's prototype and drop the member.
    Object.defineProperty(out, redactString(k, forms), {
      value: isSecretField(k) ? REDACTED : walk(v, forms, maxDepth, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
};

/** A line of a diff of CLI text: its marker column (`+`, `-` or a space), indentation, statement (group 3). */
const DIFF_LINE = /^([+\- ]?)([ \t]*)(.*?)(\r?)$/;
/** A statement's name (group 2, quoted or not, perhaps with a module prefix `ios:`), the `:` of a JSON member after it (group 3). */
const STATEMENT_NAME = /^(["']?)((?:[\w.-]+:)?[\w.-]+)\1(:?)/;
/** What ends a statement and is kept when it is masked: an opening brace, `;` or `,`. */
const STATEMENT_TAIL = /\s*([{;,])\s*$/;
/** Lines that only close a block (`}`, `};`, `]`, IOS `!`): kept as they are. */
const BLOCK_CLOSE = /^(?:[}\]]+[;,]?|!)$/;

/** A statement masked whole, its block brace or terminator kept. */
const maskedStatement = (statement: string): string => {
  const tail = STATEMENT_TAIL.exec(statement)?.[1];
  return tail === undefined ? REDACTED : `${REDACTED}${tail === '{' ? ' {' : tail}`;
};

/** A statement with what follows its first `keep` characters masked (the tail kept), or as it is when nothing follows. */
const maskedAfter = (statement: string, keep: number): string => {
  const tail = STATEMENT_TAIL.exec(statement);
  const rest = statement.slice(keep, tail ? tail.index : statement.length);
  if (rest.trim() === '') return statement;
  return `${statement.slice(0, keep)} ${REDACTED}${tail ? (tail[1] === '{' ? ' {' : tail[1]) : ''}`;
};

const localName = (name: string): string => name.slice(name.lastIndexOf(':') + 1).toLowerCase();

/**
 * A diff of CLI text (NSO's `compare-config` with `outformat cli`: one marker column, then
 * brace-nested Junos-style blocks or IOS-style indented blocks) masked as {@link redactText}
 * masks any text, and also by block, as a reader of the nesting sees it: every line inside a
 * block whose statement is named like a secret ({@link isSecretField}: `key {`, `password {`,
 * `key chain K1`) becomes `[redacted]`, its marker, indentation and braces kept; the statement
 * opening such a block keeps its name only; and inside an `snmp-server` block, what follows the
 * address of a `host <address> …` statement (the community) is masked. A child is a later line
 * indented deeper than its parent, so both styles nest the same way.
 */
export const redactCliDiff = (text: string, secrets: readonly string[] = []): string => {
  const lines = text.split('\n').map(diffLine);
  const opens = blockOpeners(lines);
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) out.push(redactText(run.join('\n'), secrets));
    run = [];
  };
  /** The open blocks around the line: their depth, whether named like a secret, whether `snmp-server`. */
  const open: { depth: number; secret: boolean; snmp: boolean }[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.statement.trim() === '') {
      run.push(line.raw);
      continue;
    }
    while (open.length > 0 && open[open.length - 1]!.depth >= line.depth) open.pop();
    const name = line.name ? localName(line.name[2]!) : '';
    const secret = line.name !== null && isSecretField(line.name[2]!);
    const shown = shownStatement(
      line,
      open.some((block) => block.secret),
      secret && opens[i]!,
      name === 'host' && open.some((block) => block.snmp),
    );
    open.push({ depth: line.depth, secret, snmp: name === 'snmp-server' });
    if (shown === undefined) {
      run.push(line.raw);
      continue;
    }
    flush();
    out.push(line.lead + shown + line.cr);
  }
  flush();
  const masked = out.join('\n');
  return holdsSecret(masked, secrets) ? WITHHELD : masked;
};

type DiffLine = ReturnType<typeof diffLine>;

const diffLine = (raw: string) => {
  const [, marker = '', indent = '', statement = '', cr = ''] = DIFF_LINE.exec(raw) ?? [];
  return { raw, lead: marker + indent, depth: indent.replaceAll('\t', '        ').length, statement, cr, name: STATEMENT_NAME.exec(statement) };
};

/** Which lines open a block: they end with `{`, or the next statement is indented deeper. */
const blockOpeners = (lines: readonly DiffLine[]): boolean[] => {
  const opens = lines.map(() => false);
  let nextDepth = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line.statement.trim() === '') continue;
    opens[i] = line.statement.trimEnd().endsWith('{') || nextDepth > line.depth;
    nextDepth = line.depth;
  }
  return opens;
};

/** A statement as the block rule shows it, or `undefined` when the rule leaves it to {@link redactText}. */
const shownStatement = (line: DiffLine, inSecret: boolean, opensSecret: boolean, snmpHost: boolean): string | undefined => {
  if (inSecret) return BLOCK_CLOSE.test(line.statement.trim()) ? line.statement : maskedStatement(line.statement);
  if (opensSecret) return maskedAfter(line.statement, line.name![0].length);
  const address = snmpHost ? /^\S+\s+\S+/.exec(line.statement) : null;
  return address ? maskedAfter(line.statement, address[0].length) : undefined;
};
