/**
 * What a report shows of a failed rule: the service's one redaction rule (platform/redaction.ts)
 * applied to what the issue quotes of the device and of the rule (`expected`, `actual` and the
 * values its `message` describes). Applied when the report is built, before it is stored: no
 * secret is at rest in the reports table, and every reader (`apiread` included) sees the same
 * masked view. Grading happens before, on the real values.
 */
import { REDACTED, isSecretField, jsonValueEnd, redactAt, redactText } from '../platform/redaction.js';
import type { JsonValue } from '../trees/config-model.js';
import { parsePointer } from '../trees/rules.js';
import type { ReportIssue } from './model.js';

type Side = 'expected' | 'actual';

/** What an issue, and each failing match it lists, quotes of the device and of the rule. */
type Quoting = Pick<ReportIssue, 'message' | 'expected' | 'actual' | 'truncated'>;

/** A JSON text (or its start) a message quotes a masked value by, and what stands for the whole value instead. */
interface Quote {
  readonly start: string;
  readonly shown: string;
}

/** One side of an issue as shown, and how the message may quote it when it was masked. */
interface ShownSide {
  readonly value: JsonValue;
  readonly quote?: Quote;
}

const shownSide = (issue: Quoting, side: Side, path: readonly string[]): ShownSide | undefined => {
  const value = issue[side];
  if (value === undefined) return undefined;
  // A cut excerpt is a string: the start of the value's JSON text, then `…`.
  const cut = issue.truncated?.includes(side) === true && typeof value === 'string';
  const shown = (cut ? (path.some(isSecretField) ? REDACTED : redactText(value)) : redactAt(path, value)) as JsonValue;
  if (JSON.stringify(shown) === JSON.stringify(value)) return { value };
  // The evaluator's messages describe scalars by their JSON text (`found the string "…"`); a cut
  // string excerpt is the start of that text.
  if (cut) return value.startsWith('"') ? { value: shown, quote: { start: value.slice(0, -1), shown: `"${REDACTED}"` } } : { value: shown };
  if (typeof value === 'object' && value !== null) return { value: shown };
  return { value: shown, quote: { start: JSON.stringify(value), shown: typeof value === 'string' ? JSON.stringify(shown) : REDACTED } };
};

/** `message` with each JSON value that starts with a quote's start replaced whole by what the quote shows. */
const maskQuoted = (message: string, quotes: readonly Quote[]): string => {
  let out = message;
  for (const { start, shown } of quotes) {
    for (let at = out.indexOf(start); at >= 0; ) {
      out = out.slice(0, at) + shown + out.slice(jsonValueEnd(out, at));
      at = out.indexOf(start, at + shown.length);
    }
  }
  return out;
};

/** `part` (an issue or one failing match it lists, at the pointer `at`) with what it quotes masked. */
const shownPart = <T extends Quoting>(part: T, at: string): T => {
  const path = parsePointer(at) ?? [];
  const expected = shownSide(part, 'expected', path);
  const actual = shownSide(part, 'actual', path);
  const quotes = [expected?.quote, actual?.quote].filter((q): q is Quote => q !== undefined);
  return {
    ...part,
    message: maskQuoted(part.message, quotes),
    ...(expected ? { expected: expected.value } : {}),
    ...(actual ? { actual: actual.value } : {}),
  };
};

/**
 * `issue` as a report shows it: values at or below a member named like a secret, members named
 * like secrets and values in device-encrypted forms masked in `expected` and `actual`, and the
 * masked values masked in `message` too; the same for each failing match it lists.
 */
export const shownIssue = (issue: ReportIssue): ReportIssue => {
  const shown = shownPart(issue, issue.at ?? issue.path);
  return issue.failures ? { ...shown, failures: issue.failures.map((f) => shownPart(f, f.at)) } : shown;
};
