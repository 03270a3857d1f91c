/**
 * openapi.json passes Redocly's recommended lint (redocly.yaml): no error and no warning. The
 * CLI is the devDependency, run as `npx redocly lint openapi.json` runs it.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { HANG_MS } from '../support/timeouts.js';

interface LintProblem {
  readonly ruleId: string;
  readonly severity: 'error' | 'warn';
  readonly message: string;
  readonly location: readonly { readonly pointer: string }[];
}

const cli = path.join(path.dirname(createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve('@redocly/cli/package.json')), 'bin/cli.js');

/** Lints `file` from `cwd` (which holds the redocly.yaml to apply); the problems found. */
const lint = (cwd: string, file: string): LintProblem[] => {
  const run = spawnSync(process.execPath, [cli, 'lint', file, '--format=json'], {
    cwd,
    encoding: 'utf8',
    timeout: HANG_MS,
    // Offline and quiet: no usage data sent, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const start = run.stdout.indexOf('{');
  expect(start, `${run.stdout}\n${run.stderr}`).toBeGreaterThanOrEqual(0);
  return (JSON.parse(run.stdout.slice(start)) as { problems: LintProblem[] }).problems;
};

const described = (problems: readonly LintProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`).join('\n');

const scratch = mkdtempSync(path.join(tmpdir(), 'netconfig-lint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('Redocly lint of openapi.json', () => {
  it('reports no error and no warning under the recommended rules', () => {
    const problems = lint(PROJECT_ROOT, 'openapi.json');
    expect(described(problems)).toBe('');
  });

  it('still wants a 2XX answer on every operation that is not a removed (deprecated) route', () => {
    const doc = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    delete doc.paths['/status']!['get']!.responses['200'];
    writeFileSync(path.join(scratch, 'openapi.json'), JSON.stringify(doc));
    copyFileSync(path.join(PROJECT_ROOT, 'redocly.yaml'), path.join(scratch, 'redocly.yaml'));
    const problems = lint(scratch, 'openapi.json');
    expect(problems.map((p) => [p.ruleId, p.location[0]?.pointer])).toEqual([['rule/operation-2xx-response-unless-removed', '#/paths/~1status/get/responses']]);
  });

  it('reports a removed route that does not declare its path parameter', () => {
    const doc = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { parameters?: unknown[] }>>;
    };
    delete doc.paths['/providers/{id}']!['get']!.parameters;
    writeFileSync(path.join(scratch, 'openapi.json'), JSON.stringify(doc));
    copyFileSync(path.join(PROJECT_ROOT, 'redocly.yaml'), path.join(scratch, 'redocly.yaml'));
    const problems = lint(scratch, 'openapi.json');
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.ruleId)).toEqual(['path-parameters-defined']);
  });
});
