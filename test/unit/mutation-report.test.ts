/** The mutation report: where a survivor's reason is read from, and what a Stryker run updates. */
import { describe, expect, it } from 'vitest';
import { reasonsIn, renderPage, withRun } from '../../tools/mutation/report.js';

const SOURCE = [
  'const a = 1;',
  '  // Mutation: first part',
  '  // and its continuation.',
  '  if (a > 0) run();',
  'const b = 2; // Mutation: at the end of the line',
  '// An ordinary comment.',
  'const c = 3;',
].join('\n');

describe('reasonsIn', () => {
  it('reads a comment block above a line (with its continuation) and one at the end of a line', () => {
    expect(reasonsIn(SOURCE)).toEqual([
      { line: 4, text: 'first part and its continuation.' },
      { line: 5, text: 'at the end of the line' },
    ]);
  });

  it('finds nothing in code without the marker', () => {
    expect(reasonsIn('// a comment\nconst x = 1;\n')).toEqual([]);
  });
});

describe('withRun', () => {
  const mutant = (status: string, line: number, covered: string[] = []) => ({
    mutatorName: 'ConditionalExpression',
    replacement: 'true',
    status,
    location: { start: { line } },
    coveredBy: covered,
  });
  const report = {
    files: {
      'functions/x.ts': {
        mutants: [
          mutant('Killed', 1, ['t1']),
          mutant('Timeout', 1),
          mutant('Survived', 4, ['t2']),
          mutant('Survived', 7),
          mutant('NoCoverage', 1),
          mutant('CompileError', 1),
          mutant('Ignored', 1),
        ],
      },
    },
    testFiles: { 'test/unit/x.test.ts': { tests: [{ id: 't1' }] }, 'test/unit/y.test.ts': { tests: [{ id: 't2' }] } },
  };
  const before = {
    modules: {
      'functions/other.ts': { killed: 1, timeouts: 0, survived: 0, noCoverage: 0, compileErrors: 0, runtimeErrors: 0, date: '2026-01-01', tests: [] },
    },
  };

  it("replaces the mutated module's figures, keeps the others, and lists the survivors no comment explains", () => {
    const after = withRun(before, report, '2026-12-01', 90, () => SOURCE);
    expect(after.modules['functions/other.ts']).toEqual(before.modules['functions/other.ts']);
    expect(after.modules['functions/x.ts']).toEqual({
      killed: 1,
      timeouts: 1,
      survived: 2,
      noCoverage: 1,
      compileErrors: 1,
      runtimeErrors: 0,
      ignored: 1,
      date: '2026-12-01',
      runSeconds: 90,
      tests: ['test/unit/x.test.ts', 'test/unit/y.test.ts'],
      unexplained: [
        { line: 1, mutator: 'ConditionalExpression', replacement: 'true', status: 'NoCoverage' },
        { line: 7, mutator: 'ConditionalExpression', replacement: 'true', status: 'Survived' },
      ],
    });
  });

  it('renders the score over all valid mutants and over the covered ones, and each reason with its line', () => {
    const page = renderPage(
      withRun(before, report, '2026-12-01', 90, () => SOURCE),
      () => SOURCE,
    );
    // 2 detected (killed, timeout) of 5 (with 2 survived, 1 uncovered), of 4 covered.
    expect(page).toContain('| `functions/x.ts` | 40.00 % / 50.00 % | 1 | 1 | 2 | 1 | 1 | 1 | 1.5 min | 2026-12-01 |');
    expect(page).toContain('- line 4 `if (a > 0) run();`: first part and its continuation.');
    expect(page).toContain('- line 7 (at the run), **no reason given**: Survived ConditionalExpression `true`');
  });
});
