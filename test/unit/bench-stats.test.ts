import { describe, expect, it } from 'vitest';
import { esbuildArgsAsOptions } from '../../tools/local/bundles.js';
import { bundleContents, packageOf } from '../../bench/bundles.js';
import { atMost, formatBytes, formatNumber, formatTable, median, pairedDifferences, percentile, ratio, rotation, summarize } from '../../bench/stats.js';

describe('percentile', () => {
  it('interpolates between the closest ranks (the median of an even series is the mean of the middle two)', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 3])).toBe(3);
  });

  it('gives p90 of 1..11 as 10 and p90 of 1..10 as 9.1', () => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 90)).toBe(10);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBeCloseTo(9.1, 10);
  });

  it('returns the minimum at p0 and the maximum at p100, and the only value of a single sample', () => {
    expect(percentile([7, 3, 9], 0)).toBe(3);
    expect(percentile([7, 3, 9], 100)).toBe(9);
    expect(percentile([42], 99)).toBe(42);
  });

  it('does not reorder the caller’s array', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('refuses an empty series and a percentile outside 0–100', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('reports count, p50, p90, p99, min, max and mean', () => {
    const s = summarize(Array.from({ length: 101 }, (_, i) => i));
    expect(s).toEqual({ n: 101, p50: 50, p90: 90, p99: 99, min: 0, max: 100, mean: 50 });
  });

  it('refuses an empty series', () => {
    expect(() => summarize([])).toThrow(RangeError);
  });
});

describe('pairedDifferences and ratio', () => {
  it('subtracts run i of one series from run i of the other', () => {
    expect(pairedDifferences([10, 20, 30], [1, 2, 3])).toEqual([9, 18, 27]);
  });

  it('refuses series of different lengths', () => {
    expect(() => pairedDifferences([1, 2], [1])).toThrow(RangeError);
  });

  it('gives no ratio over a floor of zero or less', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeUndefined();
    expect(ratio(3, -1)).toBeUndefined();
    expect(ratio(Number.NaN, 1)).toBeUndefined();
  });
});

describe('rotation', () => {
  it('puts every variant in every position once over as many rounds as there are variants', () => {
    const variants = ['a', 'b', 'c', 'd'];
    const orders = variants.map((_, round) => rotation(variants, round));
    for (const order of orders) expect([...order].sort()).toEqual(variants);
    for (let position = 0; position < variants.length; position++) {
      expect(new Set(orders.map((o) => o[position])).size).toBe(variants.length);
    }
  });

  it('keeps the order in round 0 and handles rounds past the variant count and an empty list', () => {
    expect(rotation(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotation(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
    expect(rotation([], 3)).toEqual([]);
  });
});

describe('formatTable', () => {
  it('pads columns to their widest cell, left-aligns the first column and right-aligns the others', () => {
    const table = formatTable(
      ['name', 'ms'],
      [
        ['getTree', '1.5'],
        ['bare', '12.25'],
      ],
    );
    expect(table.split('\n')).toEqual(['name        ms', '-------  -----', 'getTree    1.5', 'bare     12.25']);
  });

  it('honours explicit alignment, pads short rows and trims trailing spaces', () => {
    const table = formatTable(['a', 'b', 'c'], [['x'], ['long', 'y', 'z']], ['right', 'left', 'left']);
    expect(table.split('\n')).toEqual(['   a  b  c', '----  -  -', '   x', 'long  y  z']);
  });

  it('measures width in characters, not UTF-16 units', () => {
    const table = formatTable(['µs', 'x'], [['≤ 1×', '1']]);
    expect(table.split('\n')[0]).toBe('µs    x');
  });
});

describe('formatNumber and formatBytes', () => {
  it('prints fixed decimals and a dash for missing values', () => {
    expect(formatNumber(1.23456, 2)).toBe('1.23');
    expect(formatNumber(undefined)).toBe('–');
    expect(formatNumber(Number.POSITIVE_INFINITY)).toBe('–');
    expect(formatBytes(2048)).toBe('2.0 KiB');
  });
});

describe('atMost', () => {
  it('passes at and under the limit and fails over it', () => {
    expect(atMost('t', 1.15, 1.15, '×').pass).toBe(true);
    expect(atMost('t', 1.16, 1.15, '×')).toEqual({ name: 't', measured: '1.16×', limit: '≤ 1.15×', pass: false });
  });

  it('fails a target that could not be measured', () => {
    expect(atMost('t', undefined, 1, '×')).toMatchObject({ measured: 'not measured', pass: false });
    expect(atMost('t', Number.NaN, 1, '×').pass).toBe(false);
  });
});

describe('bundle analysis', () => {
  it('attributes inputs to their npm package or to the project', () => {
    expect(packageOf('node_modules/@aws-sdk/client-dynamodb/dist-es/index.js')).toBe('@aws-sdk/client-dynamodb');
    expect(packageOf('node_modules/.pnpm/x/node_modules/ajv/dist/runtime/ucs2length.js')).toBe('ajv');
    expect(packageOf('functions/trees/handlers/get.ts')).toBe('(this project)');
    expect(packageOf('functions/generated/validators.js')).toBe('(generated validators)');
  });

  it('sums bytes per package and finds Ajv’s compiler apart from its run-time helpers', () => {
    const contents = bundleContents({
      inputs: {},
      outputs: {
        'out/index.mjs': {
          bytes: 600,
          imports: [],
          exports: ['handler'],
          entryPoint: 'functions/x.ts',
          inputs: {
            'functions/x.ts': { bytesInOutput: 100 },
            'node_modules/ajv/dist/runtime/ucs2length.js': { bytesInOutput: 50 },
            'node_modules/ajv/dist/compile/index.js': { bytesInOutput: 300 },
            'node_modules/@middy/core/index.js': { bytesInOutput: 150 },
          },
        },
      },
    });
    expect(contents.outputBytes).toBe(600);
    expect(contents.packages).toEqual([
      { name: 'ajv', bytes: 350 },
      { name: '@middy/core', bytes: 150 },
      { name: '(this project)', bytes: 100 },
    ]);
    expect(contents.ajvCompilerModules).toEqual(['node_modules/ajv/dist/compile/index.js']);
    expect(contents.ajvModules).toHaveLength(2);
  });
});

describe('esbuildArgsAsOptions', () => {
  it('turns the functions’ --alias arguments into esbuild aliases', () => {
    expect(esbuildArgsAsOptions({ '--alias:node:http': './shim.cjs', '--alias:http': './shim.cjs' })).toEqual({
      alias: { 'node:http': './shim.cjs', http: './shim.cjs' },
    });
    expect(esbuildArgsAsOptions({})).toEqual({});
  });

  it('refuses an argument it does not understand rather than bundling the references differently', () => {
    expect(() => esbuildArgsAsOptions({ '--keep-names': true })).toThrow(/not understood/);
  });
});
