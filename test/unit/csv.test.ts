import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachmentName, csvCell, csvExportAsked, csvRecord, csvResponse, csvStream, requestedFormat, type CsvColumn } from '../../functions/platform/csv.js';
import { BadRequest } from '../../functions/platform/problem.js';

/** An RFC 4180 parser, written from the grammar, independent of the writer under test. */
const parseCsv = (text: string): string[][] => {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
        else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} in an unquoted field`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  if (record.length) throw new Error('the last record has no CRLF');
  return records;
};

/** What the docs promise a reader gets of a text cell: itself, after a `'` when it starts like a formula or with a `'`. */
const asWritten = (cell: string): string => ("=+-@\t\r'".includes(cell[0] ?? 'x') ? `'${cell}` : cell);
/** How the docs say to read a value back: a text cell that starts with `'` loses that one `'`. */
const readBack = (cell: string): string => (cell.startsWith("'") ? cell.slice(1) : cell);

const collect = async (stream: NodeJS.ReadableStream): Promise<string[]> => {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(String(chunk));
  return chunks;
};

async function* pagesOf<T>(pages: readonly (readonly T[])[]): AsyncGenerator<readonly T[]> {
  for (const page of pages) yield page;
}

describe('CSV cells and records (RFC 4180)', () => {
  it('quotes cells holding quotes, commas, CR or LF, doubling the quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('x\ry')).toBe('"x\ry"');
    expect(csvRecord(['a', 'b,c', undefined, null, 3])).toBe('a,"b,c",,,3\r\n');
  });

  it('keeps unicode as it is (UTF-8 on the wire)', () => {
    expect(csvRecord(['Zürich-ρ1', '路由器', '🛰️'])).toBe('Zürich-ρ1,路由器,🛰️\r\n');
  });

  it('guards text cells a spreadsheet would run as a formula with a leading quote', () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-cmd')).toBe("'-cmd");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe(`"'\tx"`);
    expect(csvCell('\rx')).toBe(`"'\rx"`);
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('writes numbers as numbers (a negative one is not guarded) and booleans as words', () => {
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(97.5)).toBe('97.5');
    expect(csvCell(Number.NaN)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('round-trips every row through an RFC 4180 parser (property)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\r', '\n', '=', '+', '-', '@', '\t', "'", 'é', '😀') });
    fc.assert(
      fc.property(fc.array(fc.array(text, { minLength: 1, maxLength: 5 }), { maxLength: 8 }), (rows) => {
        const parsed = parseCsv(rows.map((row) => csvRecord(row)).join(''));
        expect(parsed).toEqual(rows.map((row) => row.map(asWritten)));
        expect(parsed.map((row) => row.map(readBack))).toEqual(rows);
      }),
    );
  });

  it('guards a cell that starts with a quote, so that reading back is exact', () => {
    expect(csvCell("'=1+1")).toBe("''=1+1");
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell("it's")).toBe("it's");
  });

  it('quotes cells holding a semicolon or a tab, which some spreadsheets split on', () => {
    const cell = "edge;=MSEXCEL|'\\..\\Windows\\System32\\calc.exe'!A0";
    expect(csvCell(cell)).toBe(`"${cell}"`);
    expect(csvCell('a\tb')).toBe('"a\tb"');
  });
});

describe('CSV streams', () => {
  interface Row {
    readonly name: string;
    readonly score?: number;
  }
  const columns: readonly CsvColumn<Row>[] = [
    { name: 'name', value: (r) => r.name },
    { name: 'score', value: (r) => r.score },
  ];

  it('writes the header, then one chunk per page, pulling pages only as they are read', async () => {
    const read: number[] = [];
    async function* pages(): AsyncGenerator<readonly Row[]> {
      for (let page = 0; page < 3; page++) {
        read.push(page);
        yield [{ name: `d${page}`, score: page }];
      }
    }
    const stream = csvStream(columns, pages());
    expect(read).toEqual([]);
    const chunks = await collect(stream);
    expect(chunks).toEqual(['name,score\r\n', 'd0,0\r\n', 'd1,1\r\n', 'd2,2\r\n']);
    expect(read).toEqual([0, 1, 2]);
  });

  it('answers a header alone for an empty list', async () => {
    const response = await csvResponse(columns, pagesOf<Row>([]), 'x.csv');
    expect(await collect(response.body)).toEqual(['name,score\r\n']);
  });

  it('reads the first page before answering, so that its failure is still a problem answer', async () => {
    async function* failing(): AsyncGenerator<readonly Row[]> {
      yield* [];
      throw new Error('store down');
    }
    await expect(csvResponse(columns, failing(), 'x.csv')).rejects.toThrow('store down');
  });

  it('answers 200 text/csv with a download name', async () => {
    const response = await csvResponse(columns, pagesOf([[{ name: 'a' }], [], [{ name: '=b', score: 1 }]]), 'batch-reports.csv');
    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toMatch(/^text\/csv; charset=utf-8/);
    expect(response.headers['Content-Disposition']).toBe('attachment; filename="batch-reports.csv"');
    expect((await collect(response.body)).join('')).toBe("name,score\r\na,\r\n'=b,1\r\n");
  });
});

describe('the format a request asks for', () => {
  const ask = (query: Record<string, string>, accept?: string) =>
    requestedFormat({ queryStringParameters: query, headers: accept === undefined ? {} : { accept } });

  it('is JSON unless CSV is asked for', () => {
    expect(ask({})).toBe('json');
    expect(ask({}, '*/*')).toBe('json');
    expect(ask({}, 'application/json')).toBe('json');
    expect(ask({}, 'text/html')).toBe('json');
    expect(ask({}, 'text/csv, application/json')).toBe('json');
  });

  it('is CSV when Accept ranks text/csv above JSON', () => {
    expect(ask({}, 'text/csv')).toBe('csv');
    expect(ask({}, 'TEXT/CSV; charset=utf-8')).toBe('csv');
    expect(ask({}, 'application/json;q=0.5, text/csv')).toBe('csv');
    expect(ask({}, 'text/*, application/json;q=0.1')).toBe('csv');
    expect(ask({}, 'text/csv;q=0.2, */*;q=0.1')).toBe('csv');
  });

  it('follows the format parameter over Accept', () => {
    expect(ask({ format: 'csv' }, 'application/json')).toBe('csv');
    expect(ask({ format: 'json' }, 'text/csv')).toBe('json');
  });
});

describe('a CSV export asked for', () => {
  const asked = (query: Record<string, string>, accept = 'text/csv') => csvExportAsked({ queryStringParameters: query, headers: { accept } });

  it('is the request for CSV, without paging', () => {
    expect(asked({})).toBe(true);
    expect(asked({ grade: 'fail' }, 'application/json')).toBe(false);
    // A JSON page keeps its paging.
    expect(asked({ limit: '5', cursor: 'abc' }, 'application/json')).toBe(false);
  });

  it('refuses limit and cursor with CSV, naming each', () => {
    expect(() => asked({ format: 'csv', limit: '5' })).toThrow(BadRequest);
    try {
      asked({ cursor: 'abc' });
      expect.unreachable();
    } catch (error) {
      expect((error as BadRequest).extensions['errors']).toEqual([{ in: 'query', field: 'cursor', message: 'is not allowed with format csv' }]);
    }
  });
});

describe('a download name', () => {
  it('joins its parts, every character a header or a file system could misread made `_`', () => {
    expect(attachmentName(['c0ffee', 'trend'])).toBe('c0ffee-trend.csv');
    expect(attachmentName(['p1', '=cmd|calc "x"/y\\z;é', 'history'])).toBe('p1-_cmd_calc__x__y_z__-history.csv');
  });
});
