/**
 * Exact comparison of decimal numbers as rules meet them: JSON numbers, and strings of decimal
 * numbers as YANG writes 64-bit integers and decimal64 (`"9223372036854775807"`, `"-1.50"`),
 * which a double cannot hold exactly. A number is read as the decimal JSON writes for it.
 */

/** A decimal: `digits × 10^-scale`. */
export interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

/** The longest decimal string read as a number: YANG's longest (decimal64) is 21 characters. */
export const MAX_DECIMAL_CHARS = 64;

const DECIMAL_TEXT = /^([+-]?)([0-9]+)(?:\.([0-9]+))?$/;
const JSON_NUMBER_TEXT = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-]?[0-9]+))?$/;

const fromParts = (sign: string, whole: string, fraction = '', exponent = 0): Decimal => {
  const digits = BigInt(`${whole}${fraction}`);
  return { digits: sign === '-' ? -digits : digits, scale: fraction.length - exponent };
};

/**
 * `value` as a decimal: a finite number, or a string of a decimal number (optional sign, digits,
 * optional fraction; at most {@link MAX_DECIMAL_CHARS} characters); else `undefined`.
 */
export const decimalOf = (value: unknown): Decimal | undefined => {
  if (typeof value === 'number') {
    // Mutation: → `false` is equivalent: `Infinity`, `-Infinity` and `NaN` are no JSON number text.
    if (!Number.isFinite(value)) return undefined;
    const m = JSON_NUMBER_TEXT.exec(String(value));
    return m ? fromParts(m[1] as string, m[2] as string, m[3], Number(m[4] ?? 0)) : undefined;
  }
  if (typeof value !== 'string' || value.length > MAX_DECIMAL_CHARS) return undefined;
  const m = DECIMAL_TEXT.exec(value);
  return m ? fromParts(m[1] as string, m[2] as string, m[3]) : undefined;
};

const TEN = 10n;

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export const compareDecimals = (a: Decimal, b: Decimal): number => {
  const scale = Math.max(a.scale, b.scale);
  const x = a.digits * TEN ** BigInt(scale - a.scale);
  const y = b.digits * TEN ** BigInt(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
};
