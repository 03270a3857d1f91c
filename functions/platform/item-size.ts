/**
 * The size of an item as DynamoDB counts it against its 400 KB item limit
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * attribute names and values in UTF-8 bytes, a number by its significant digits, 3 bytes for a
 * list or a map plus 1 byte per element. Computed on the plain JavaScript item the Document
 * client marshals, so that a write can be refused with a clear 413 before DynamoDB refuses it.
 */

/** DynamoDB's item size limit: 400 KB, counted as 400 × 1024 bytes. */
export const DYNAMO_ITEM_LIMIT_BYTES = 400 * 1024;

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A number: 1 byte per two significant digits, plus 1 (DynamoDB's own approximation). */
const numberBytes = (n: number | bigint): number => {
  const digits = String(n).replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
};

/** The size of one attribute value. */
export const valueBytes = (value: unknown): number => {
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberBytes(value);
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((sum, v) => sum + valueBytes(v), 0);
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + 1 + valueBytes(v), 3);
  return Object.entries(value as object).reduce<number>((sum, [name, v]) => sum + 1 + utf8(name) + valueBytes(v), 3);
};

/** The size of an item: each attribute's name plus its value. */
export const itemBytes = (item: Readonly<Record<string, unknown>>): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueBytes(value), 0);
