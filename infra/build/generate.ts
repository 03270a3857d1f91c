/**
 * `npm run generate`: writes the artefacts derived from the route table (request validators, the
 * route index, `openapi.json`). Tests fail when a committed artefact is stale.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import { openApiDocument } from './openapi.js';
import { routeIndexSource } from './route-index.js';
import { validatorsSource } from './validators.js';

export const generatedFiles = (): Record<string, string> => {
  const { js, dts } = validatorsSource();
  return {
    'functions/generated/validators.js': js,
    'functions/generated/validators.d.ts': dts,
    'functions/generated/route-index.ts': routeIndexSource(),
    'openapi.json': `${JSON.stringify(openApiDocument(), null, 2)}\n`,
  };
};

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [file, content] of Object.entries(generatedFiles())) {
    const target = path.join(PROJECT_ROOT, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${file}`);
  }
}
