/**
 * The redaction rule against a corpus of device secret forms (test/support/secret-corpus.ts):
 * every entry, in every encoding a log line meets it in, through the real logger (a field of a
 * line) and through the relay's trace line (a body of each media type, a header value), never
 * shows its secret in what the logger wrote, however a reader decodes it. Then the same with
 * random secrets in place of the corpus's own.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loggedBody, loggedHeaders } from '../../functions/relay/call-log.js';
import { Logger } from '../../functions/platform/logger.js';
import { holdsSecret } from '../../functions/platform/redaction.js';
import { ENCODINGS, SECRET_CORPUS, excerptOf, type CorpusEntry } from '../support/secret-corpus.js';

/** The media type a relay body of each encoding is sent with. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  'plain text': 'text/plain',
  'inside a JSON string': 'application/json',
  'JSON in a JSON string': 'application/yang-data+json',
  'URL query': 'text/plain',
  'form body': 'application/x-www-form-urlencoded',
  'header value': 'text/plain',
};

/** Every line the logger writes for one encoded excerpt: as a field, and as a relay `trace` line. */
const linesFor = (encoding: string, text: string): string[] => {
  const lines: string[] = [];
  const log = new Logger('svc', 'debug', (line) => lines.push(line));
  log.info('field', { text, nested: { list: [text] } });
  const exchange = {
    request: {
      method: 'POST',
      path: '/restconf/data',
      headers: loggedHeaders({ Accept: 'application/json', 'X-Config': ENCODINGS['header value']!(text) }, []),
      body: loggedBody(text, MEDIA_TYPES[encoding], []),
    },
  };
  log.log('trace', 'relay exchange', { adapter: 'lab', ...exchange }, 'trace');
  return lines;
};

/** Every string of a written line, and of each JSON document a string holds, at any depth. */
const stringsOf = (value: unknown, out: string[] = []): string[] => {
  if (typeof value === 'string') {
    out.push(value);
    try {
      stringsOf(JSON.parse(value), out);
    } catch {
      // Not JSON: the string itself is all there is.
    }
  } else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) stringsOf(v, out);
  return out;
};

/** True when a line shows `secret` as written or as a reader could decode any string of it. */
const shows = (line: string, secret: string): boolean => [line, ...stringsOf(JSON.parse(line))].some((text) => holdsSecret(text, [secret]));

/** The encodings of an entry holding `secret`, and the lines written for each. */
const cases = (entry: CorpusEntry, secret: string) =>
  Object.entries(ENCODINGS).map(([encoding, encode]) => ({ encoding, lines: linesFor(encoding, encode(excerptOf(entry, secret))) }));

describe('the secret corpus', () => {
  it('holds every platform and form it promises', () => {
    expect(new Set(SECRET_CORPUS.map((e) => e.platform))).toEqual(new Set(['ios', 'ios-xr', 'nx-os', 'junos', 'nso-json', 'pairs']));
    for (const entry of SECRET_CORPUS) expect(excerptOf(entry, entry.secret)).not.toContain('{S}');
  });

  it('would be found by the check when nothing redacted it (the check can fail)', () => {
    for (const entry of SECRET_CORPUS) {
      for (const [encoding, encode] of Object.entries(ENCODINGS)) {
        const raw = JSON.stringify({ level: 'info', text: encode(excerptOf(entry, entry.secret)) });
        expect(shows(raw, entry.secret), `${entry.template} ${encoding}`).toBe(true);
      }
    }
  });

  describe.each(
    SECRET_CORPUS.map(
      (entry) =>
        [
          `${entry.platform}: ${entry.template
            .split('\n')
            .find((l) => l.includes('{S}'))!
            .trim()}`,
          entry,
        ] as const,
    ),
  )('%s', (_label, entry) => {
    it('never shows its secret, in any encoding, as a field or in a trace line', () => {
      for (const { encoding, lines } of cases(entry, entry.secret)) {
        expect(lines).toHaveLength(2);
        for (const line of lines) expect(shows(line, entry.secret), `${encoding}: ${line}`).toBe(false);
      }
    });
  });

  it('keeps what is no secret: the text around a masked value stays readable', () => {
    const [line] = linesFor('plain text', excerptOf(SECRET_CORPUS[0]!, SECRET_CORPUS[0]!.secret));
    expect(JSON.parse(line!).text).toBe('hostname r1\nenable secret [redacted]\n!');
  });
});

describe('random secrets in the corpus forms', () => {
  // A device secret is one token: printable ASCII without blanks. At least 8 characters with a
  // letter and a digit, so that it cannot be part of the line by chance (a field name, a marker).
  const secret = fc
    .string({ unit: fc.constantFrom(...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i))), minLength: 8, maxLength: 40 })
    .filter((s) => /[A-Za-z]/.test(s) && /[0-9]/.test(s));

  it('never shows one, whatever its characters, in any form and encoding', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SECRET_CORPUS), secret, (entry, value) => {
        for (const { encoding, lines } of cases(entry, value)) {
          for (const line of lines) if (shows(line, value)) throw new Error(`${encoding}: ${line}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
