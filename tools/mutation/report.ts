/**
 * Writes docs/reports/mutation.md, the record of mutation testing: the latest score of each
 * mutated module and every mutant left alive with its reason.
 *
 *   tsx tools/mutation/report.ts [--run <stryker json>] [--seconds <run time>]
 *
 * The figures live in docs/reports/mutation.json, one entry per module; a Stryker run replaces
 * the entries of the modules it mutated and leaves the others alone (runs are usually one module
 * at a time). The reasons are read from the code itself: a survivor is explained by a comment
 * starting with `// Mutation:` on the line above the mutant (continued on the `//` lines under
 * it) or at the end of the mutant's line. `npm run mutate` runs Stryker and then this script;
 * `npm run mutate:report` only rewrites the page from the JSON and the comments.
 */
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA_FILE = path.join(ROOT, 'docs/reports/mutation.json');
const PAGE_FILE = path.join(ROOT, 'docs/reports/mutation.md');
const MARKER = 'Mutation:';

/** One module's latest run, as the data file keeps it. */
export interface ModuleRecord {
  readonly killed: number;
  readonly timeouts: number;
  readonly survived: number;
  readonly noCoverage: number;
  readonly compileErrors: number;
  readonly runtimeErrors: number;
  readonly ignored?: number;
  readonly date: string;
  /** Wall time of the whole run the module was part of. */
  readonly runSeconds?: number;
  /** The test files whose tests covered the module's mutants. */
  readonly tests: readonly string[];
  /** Survivors (and uncovered mutants) no `Mutation:` comment explained when the run ended. */
  readonly unexplained?: readonly { line: number; mutator: string; replacement: string; status: string }[];
  /** What happened since the run, when it matters to the figures. */
  readonly note?: string;
}

export interface MutationData {
  readonly modules: Record<string, ModuleRecord>;
  /** Bugs planted by hand and the tests that catch them (not a Stryker run: kept as written). */
  readonly plantedByHand?: readonly { bug: string; caughtBy: string; date: string }[];
}

/** A `// Mutation:` comment and the code line it concerns (1-based). */
export interface Reason {
  readonly line: number;
  readonly text: string;
}

/** The reasons written in one source file. */
export const reasonsIn = (source: string): Reason[] => {
  const lines = source.split('\n');
  const reasons: Reason[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const at = line.indexOf(`// ${MARKER}`);
    if (at < 0) continue;
    const parts = [line.slice(at + 3 + MARKER.length).trim()];
    if (line.slice(0, at).trim() !== '') {
      // At the end of a code line: that line.
      reasons.push({ line: i + 1, text: parts[0]! });
      continue;
    }
    let next = i + 1;
    while (next < lines.length && /^\s*\/\/(?!\s*Mutation:)/.test(lines[next]!)) {
      parts.push(
        lines[next]!.trim()
          .replace(/^\/\/\s?/, '')
          .trim(),
      );
      next += 1;
    }
    reasons.push({ line: next + 1, text: parts.filter((p) => p !== '').join(' ') });
    i = next - 1;
  }
  return reasons;
};

interface StrykerMutant {
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly status: string;
  readonly location: { readonly start: { readonly line: number } };
  readonly coveredBy?: readonly string[];
  readonly killedBy?: readonly string[];
}

interface StrykerReport {
  readonly files: Record<string, { readonly mutants: readonly StrykerMutant[] }>;
  readonly testFiles?: Record<string, { readonly tests: readonly { readonly id: string }[] }>;
}

const relative = (file: string): string => path.relative(ROOT, path.resolve(ROOT, file)).split(path.sep).join('/');

/** The data updated with one Stryker run: each module it mutated gets that run's figures. */
export const withRun = (
  data: MutationData,
  report: StrykerReport,
  date: string,
  runSeconds?: number,
  sourceOf = (f: string) => readFileSync(path.join(ROOT, f), 'utf8'),
): MutationData => {
  const testFileOf = new Map<string, string>();
  for (const [file, { tests }] of Object.entries(report.testFiles ?? {})) for (const t of tests) testFileOf.set(t.id, relative(file));
  const modules = { ...data.modules };
  for (const [key, { mutants }] of Object.entries(report.files)) {
    const file = relative(key);
    const explained = new Set(reasonsIn(sourceOf(file)).map((r) => r.line));
    const count = (status: string) => mutants.filter((m) => m.status === status).length;
    const tests = new Set<string>();
    for (const m of mutants) for (const id of [...(m.coveredBy ?? []), ...(m.killedBy ?? [])]) if (testFileOf.has(id)) tests.add(testFileOf.get(id)!);
    const unexplained = mutants
      .filter((m) => (m.status === 'Survived' || m.status === 'NoCoverage') && !explained.has(m.location.start.line))
      .map((m) => ({ line: m.location.start.line, mutator: m.mutatorName, replacement: m.replacement ?? '', status: m.status }))
      .sort((a, b) => a.line - b.line);
    modules[file] = {
      killed: count('Killed'),
      timeouts: count('Timeout'),
      survived: count('Survived'),
      noCoverage: count('NoCoverage'),
      compileErrors: count('CompileError'),
      runtimeErrors: count('RuntimeError'),
      ignored: count('Ignored'),
      date,
      ...(runSeconds === undefined ? {} : { runSeconds }),
      tests: [...tests].sort(),
      unexplained,
    };
  }
  return { ...data, modules };
};

const percent = (part: number, whole: number): string => (whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(2)} %`);

const minutes = (seconds: number | undefined): string => (seconds === undefined ? '' : `${(seconds / 60).toFixed(1)} min`);

const cell = (text: string): string => text.replace(/\|/g, '\\|');

const code = (text: string): string => {
  const flat = text.replace(/`/g, "'").replace(/\s+/g, ' ');
  if (flat === '') return '';
  return `\`${flat.length > 72 ? `${flat.slice(0, 70).trimEnd()}…` : flat}\``;
};

/** The page, from the data and the reasons found beside the code. */
export const renderPage = (data: MutationData, sourceOf: (file: string) => string | undefined, unmeasured: readonly string[] = []): string => {
  const files = Object.keys(data.modules).sort();
  const out: string[] = [
    '# Mutation testing: latest results',
    '',
    '<!-- Generated by tools/mutation/report.ts from docs/reports/mutation.json and the',
    '     `// Mutation:` comments in the code. Do not edit: run `npm run mutate -- --mutate <file>`',
    '     (Stryker, then this page) or `npm run mutate:report` (this page only). -->',
    '',
    'Written by `npm run mutate` after each Stryker run (a run replaces the rows of the modules it',
    'mutated) and by `npm run mutate:report`. How to run it: [development guide](../development.md#mutation-testing).',
    'Score: mutants detected (killed or timed out) over all valid mutants, then over the covered ones;',
    'type errors are mutants the TypeScript checker rejected, ignored ones are static (`ignoreStatic`).',
    '',
    '| module | score (all / covered) | killed | timeouts | survived | no coverage | type errors | ignored | run | date |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const file of files) {
    const m = data.modules[file]!;
    const detected = m.killed + m.timeouts;
    const errors = m.compileErrors + m.runtimeErrors;
    out.push(
      `| \`${file}\` | ${percent(detected, detected + m.survived + m.noCoverage)} / ${percent(detected, detected + m.survived)} | ${m.killed} | ${m.timeouts} | ${m.survived} | ${m.noCoverage} | ${errors} | ${m.ignored ?? ''} | ${minutes(m.runSeconds)} | ${m.date} |`,
    );
  }
  out.push('', '## Tests run per module', '');
  for (const file of files) {
    const m = data.modules[file]!;
    out.push(`- \`${file}\`: ${m.tests.map((t) => `\`${t}\``).join(', ') || 'none recorded'}${m.note ? `. ${m.note}` : ''}`);
  }
  out.push('', '## Mutants left alive', '', 'Each reason is the `// Mutation:` comment beside the code (file:line of the code it concerns).', '');
  for (const file of [...files, ...unmeasured].sort()) {
    const source = sourceOf(file);
    const reasons = source === undefined ? [] : reasonsIn(source);
    const unexplained = data.modules[file]?.unexplained ?? [];
    if (reasons.length === 0 && unexplained.length === 0) continue;
    out.push(`### \`${file}\``, '');
    if (!(file in data.modules)) out.push('No run recorded for this file yet; the reasons below are from the code.', '');
    const lines = source?.split('\n') ?? [];
    for (const r of reasons) out.push(`- line ${r.line} ${code((lines[r.line - 1] ?? '').trim())}: ${r.text}`);
    if (source === undefined) out.push('- (the file is gone: run the module again)');
    for (const u of unexplained) out.push(`- line ${u.line} (at the run), **no reason given**: ${u.status} ${cell(u.mutator)} ${cell(code(u.replacement))}`);
    out.push('');
  }
  if (data.plantedByHand && data.plantedByHand.length > 0) {
    out.push('## Bugs planted by hand', '', 'Kept from docs/reports/mutation.json as written; each is caught by the tests named.', '');
    out.push('| planted bug | caught by | date |', '| --- | --- | --- |');
    for (const p of data.plantedByHand) out.push(`| ${cell(p.bug)} | ${cell(p.caughtBy)} | ${p.date} |`);
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
};

const main = (): void => {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args[at + 1];
  };
  let data = JSON.parse(readFileSync(DATA_FILE, 'utf8')) as MutationData;
  const run = option('--run');
  if (run !== undefined) {
    const seconds = option('--seconds');
    const report = JSON.parse(readFileSync(path.resolve(run), 'utf8')) as StrykerReport;
    data = withRun(data, report, new Date().toISOString().slice(0, 10), seconds === undefined ? undefined : Math.round(Number(seconds)));
    writeFileSync(DATA_FILE, `${JSON.stringify(data, null, 2)}\n`);
  }
  // A module that is no longer mutated drops out of the page once its file is gone.
  const sourceOf = (file: string): string | undefined => (existsSync(path.join(ROOT, file)) ? readFileSync(path.join(ROOT, file), 'utf8') : undefined);
  const unmeasured = globSync('functions/**/*.ts', { cwd: ROOT })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => !(f in data.modules) && reasonsIn(readFileSync(path.join(ROOT, f), 'utf8')).length > 0);
  writeFileSync(PAGE_FILE, renderPage(data, sourceOf, unmeasured));
  process.stdout.write(`wrote ${relative(PAGE_FILE)}\n`);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
