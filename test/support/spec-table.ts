/**
 * Reads spec section 9.1 from the test data (a verbatim copy of the spec's table), so that
 * tests check the route table and the stack against the spec, not against themselves.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SpecRow {
  /** `ANY` when the spec names no method. */
  method: string;
  /** In the spec's `:name` form. */
  path: string;
  description: string;
  deprecatedIn: string;
  removedIn: string;
  replacement: string[];
}

const FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../data/spec-9.1.md');

const item = (cell: string): { method: string; path: string } => {
  const match = /^(?:([A-Z]+) )?`([^`]+)`$/.exec(cell.trim());
  if (!match) throw new Error(`unreadable item: ${cell}`);
  return { method: match[1] ?? 'ANY', path: match[2]! };
};

/** `GET \`/a\` or \`/b\`` → [`GET /a`, `GET /b`]; `none` → []. */
const replacements = (cell: string): string[] => {
  const text = cell.trim();
  if (text === 'none') return [];
  const method = /^([A-Z]+) /.exec(text)?.[1];
  const paths = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  return paths.map((p) => (method ? `${method} ${p}` : p));
};

export const specRows = (): SpecRow[] =>
  readFileSync(FILE, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Item') && !line.startsWith('|---'))
    .map((line) => {
      const cells = line.split('|').slice(1, -1);
      if (cells.length !== 5) throw new Error(`unreadable row: ${line}`);
      const { method, path: p } = item(cells[0]!);
      return {
        method,
        path: p,
        description: cells[1]!.trim(),
        deprecatedIn: cells[2]!.trim(),
        removedIn: cells[3]!.trim(),
        replacement: replacements(cells[4]!),
      };
    });
