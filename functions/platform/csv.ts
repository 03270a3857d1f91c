/**
 * CSV answers of list routes (RFC 4180): one mechanism for every route that declares
 * `formats: ['json', 'csv']` in the route table. The rows come page by page from the store (an
 * `AsyncIterable<readonly Row[]>`) and are written as they come, through a stream that pulls the
 * next page only when the previous one has been taken by the client (see `http-core.ts`
 * streaming handlers), so an export of any size holds one page in memory.
 */
import { Readable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { BadRequest, type FieldError } from './problem.js';

/** The formats a list route may answer in. */
export const RESPONSE_FORMATS = ['json', 'csv'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

/** What a cell is made of; `undefined` and `null` are empty cells. */
export type CsvValue = string | number | boolean | null | undefined;

/** One column: its header name and how a row gives its cell. */
export interface CsvColumn<Row> {
  readonly name: string;
  readonly value: (row: Row) => CsvValue;
}

/**
 * Cells a spreadsheet would read as a formula (OWASP "CSV injection"): a leading `=`, `+`,
 * `-`, `@`, tab or carriage return. Such a cell is written with a leading `'`, which spreadsheets
 * show as text. A cell that starts with `'` itself is guarded too, so the rule to read a value
 * back is exact: a text cell that starts with `'` loses that one `'`. Numbers are never guarded
 * (a negative number stays a number).
 */
const FORMULA_START = /^[=+\-@\t\r']/;
/**
 * A cell that is quoted: it holds a quote, a comma, a CR or a LF (RFC 4180), or a semicolon or a
 * tab, which spreadsheets in some locales take for the separator (`a;=1+1` would be two cells,
 * the second a formula); quoted, it stays one cell.
 */
const NEEDS_QUOTES = /[",;\t\r\n]/;

/** One cell as RFC 4180 writes it, formula-guarded. */
export const csvCell = (value: CsvValue): string => {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = typeof value === 'boolean' ? String(value) : FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** One record: cells joined by commas, ended by CRLF (RFC 4180 §2). */
export const csvRecord = (cells: readonly CsvValue[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/** The header record and then one record per row, one string per page. */
export async function* csvChunks<Row>(columns: readonly CsvColumn<Row>[], pages: AsyncIterable<readonly Row[]>): AsyncGenerator<string> {
  yield csvRecord(columns.map((c) => c.name));
  for await (const page of pages) {
    if (page.length) yield page.map((row) => csvRecord(columns.map((c) => c.value(row)))).join('');
  }
}

/**
 * The pages as a stream of CSV. `Readable.from` asks the generator for the next chunk only when
 * its buffer has room, so a slow client slows the store reads down rather than filling memory.
 */
export const csvStream = <Row>(columns: readonly CsvColumn<Row>[], pages: AsyncIterable<readonly Row[]>): Readable =>
  Readable.from(csvChunks(columns, pages), { objectMode: false });

/** A media range of an `Accept` header: its type and quality. */
const acceptQualities = (accept: string): Map<string, number> => {
  const out = new Map<string, number>();
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (type && Number.isFinite(quality)) out.set(type, Math.max(out.get(type) ?? 0, quality));
  }
  return out;
};

const MEDIA_TYPES: Record<ResponseFormat, readonly string[]> = {
  json: ['application/json', 'application/*', '*/*'],
  csv: ['text/csv', 'text/*', '*/*'],
};

/** The quality an `Accept` header gives a format: its most specific matching range's. */
const qualityOf = (qualities: Map<string, number>, format: ResponseFormat): number => {
  for (const type of MEDIA_TYPES[format]) {
    const q = qualities.get(type);
    if (q !== undefined) return q;
  }
  return 0;
};

/**
 * The format a request asks for: the `format` query parameter when given (the validator
 * admitted only the route's formats), else the `Accept` header: CSV only when it ranks
 * `text/csv` above JSON, so that a client which names neither, or both equally, gets JSON as
 * before. Headers are lower-cased by then (`http-core.ts`).
 */
export const requestedFormat = (event: Pick<APIGatewayProxyEvent, 'queryStringParameters' | 'headers'>): ResponseFormat => {
  const asked = event.queryStringParameters?.['format'];
  if (asked === 'csv' || asked === 'json') return asked;
  const accept = event.headers?.['accept'];
  if (!accept) return 'json';
  const qualities = acceptQualities(accept);
  return qualityOf(qualities, 'csv') > qualityOf(qualities, 'json') ? 'csv' : 'json';
};

/** A page source whose first page was already read. */
async function* startingWith<Row>(first: IteratorResult<readonly Row[]>, rest: AsyncIterator<readonly Row[]>): AsyncGenerator<readonly Row[]> {
  if (first.done) return;
  yield first.value;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * A 200 answer streaming the rows as CSV, named `filename` for a browser's download. The first
 * page is read before anything is answered, so a failure to read it (the store unavailable) is
 * still a problem answer; a failure on a later page, once the status is sent, ends the stream
 * early (the client sees an incomplete transfer, and the function logs the error).
 */
export const csvResponse = async <Row>(columns: readonly CsvColumn<Row>[], pages: AsyncIterable<readonly Row[]>, filename: string) => {
  const iterator = pages[Symbol.asyncIterator]();
  const first = await iterator.next();
  return {
    statusCode: 200,
    headers: { 'Content-Type': CSV_CONTENT_TYPE, 'Content-Disposition': `attachment; filename="${filename}"` },
    body: csvStream(columns, startingWith(first, iterator)),
  };
};

/** The field errors of paging parameters sent with a CSV export (which is never paged). */
const pagingErrors = (limit: string | undefined, cursor: string | undefined): FieldError[] => [
  ...(limit !== undefined ? [{ in: 'query' as const, field: 'limit', message: 'is not allowed with format csv' }] : []),
  ...(cursor !== undefined ? [{ in: 'query' as const, field: 'cursor', message: 'is not allowed with format csv' }] : []),
];

/**
 * Whether a list route's request asks for its CSV export ({@link requestedFormat}). An export is
 * the whole list: a page size or a cursor would mean something it does not do, so either one sent
 * with it is a 400 naming them.
 */
export const csvExportAsked = (event: Pick<APIGatewayProxyEvent, 'queryStringParameters' | 'headers'>): boolean => {
  if (requestedFormat(event) !== 'csv') return false;
  const { limit, cursor } = event.queryStringParameters ?? {};
  if (limit !== undefined || cursor !== undefined) {
    throw new BadRequest('A CSV export is the whole list: leave out limit and cursor.', pagingErrors(limit, cursor));
  }
  return true;
};

/**
 * A download's file name made of the given parts joined by `-`: every character but letters,
 * digits, `.`, `_` and `-` becomes `_` (a device name may hold quotes, slashes or anything else a
 * `Content-Disposition` header or a file system would misread).
 */
export const attachmentName = (parts: readonly string[], extension = 'csv'): string =>
  `${parts.map((p) => p.replace(/[^A-Za-z0-9._-]/g, '_')).join('-')}.${extension}`;
