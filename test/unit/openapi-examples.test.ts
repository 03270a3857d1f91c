/**
 * Every example in openapi.json validates against its schema, read strictly: an example member
 * the schema does not document fails (see test/support/openapi-conformance.ts).
 */
import { describe, expect, it } from 'vitest';
import { OpenApiSchemas, readOpenApi } from '../support/openapi-conformance.js';

type Json = Record<string, unknown>;

/** Each `example` / `examples` of a media type or parameter, with the pointer of its schema. */
const examplesOf = (node: unknown, at: string[] = []): { where: string; schema: string; value: unknown }[] => {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return [];
  const here = node as Json;
  const ptr = (parts: string[]) => `#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
  const own: { where: string; schema: string; value: unknown }[] = [];
  if ('schema' in here && 'example' in here) own.push({ where: ptr([...at, 'example']), schema: ptr([...at, 'schema']), value: here['example'] });
  if ('schema' in here && here['examples'] && typeof here['examples'] === 'object') {
    for (const [name, ex] of Object.entries(here['examples'] as Record<string, Json>)) {
      own.push({ where: ptr([...at, 'examples', name]), schema: ptr([...at, 'schema']), value: ex['value'] });
    }
  }
  return [...own, ...Object.entries(here).flatMap(([k, v]) => examplesOf(v, [...at, k]))];
};

const doc = readOpenApi();
const schemas = new OpenApiSchemas(doc);
const examples = examplesOf(doc);

describe('openapi.json examples', () => {
  it('has examples: one per removed operation at least', () => {
    const removed = Object.values(doc['paths'] as Record<string, Record<string, Json>>)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op['deprecated']);
    expect(examples.length).toBeGreaterThanOrEqual(removed.length);
  });

  it.each(examples.map((e) => [e.where, e] as const))('%s validates against its schema, with no undocumented member', (_, example) => {
    expect(schemas.errors(example.schema, example.value)).toEqual([]);
  });

  it('refuses an example member the schema does not document', () => {
    const [first] = examples;
    expect(schemas.errors(first!.schema, { ...(first!.value as Json), undocumented: true }).join()).toMatch(/additional properties/);
  });
});
