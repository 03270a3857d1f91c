import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../infra/build/generate.js';
import { PROJECT_ROOT } from '../../infra/paths.js';

describe('generated artefacts', () => {
  for (const [file, content] of Object.entries(generatedFiles())) {
    it(`${file} is up to date with the route table (run npm run generate)`, () => {
      expect(readFileSync(path.join(PROJECT_ROOT, file), 'utf8')).toBe(content);
    });
  }

  it('validators.js declares no schema object that no validator refers to', () => {
    const code = readFileSync(path.join(PROJECT_ROOT, 'functions/generated/validators.js'), 'utf8');
    const declared = [...code.matchAll(/^const (schema\d+) = /gm)].map((m) => m[1]!);
    for (const name of declared) expect(code.match(new RegExp(`\\b${name}\\b`, 'g'))!.length, name).toBeGreaterThan(1);
  });

  it('openapi.json is OpenAPI 3.1 with the removed routes as deprecated 410 operations', () => {
    const doc = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi.json'), 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    const removed = Object.values(doc.paths as Record<string, Record<string, { deprecated?: boolean; responses: object }>>)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op.deprecated);
    // 33 single-method routes + /isAlive under each of the 7 methods OpenAPI names.
    expect(removed).toHaveLength(33 + 7);
    // 410 is the route's own answer; the rest are API Gateway's (413, 415, 429…), shared components.
    for (const op of removed) {
      expect(Object.keys(op.responses)).toContain('410');
      for (const [status, response] of Object.entries(op.responses)) {
        if (status !== '410') expect(response).toEqual({ $ref: expect.stringMatching(/^#\/components\/responses\/Gateway\d{3}/) });
      }
    }
    expect(doc.paths['/orch_manager/restAction/{adapterId}'].post['x-roles']).toEqual(['admin']);
    expect(doc.paths['/configuration_manager/configs/{treeId}'].get['x-roles']).toEqual(['admin', 'apiread']);
  });
});
