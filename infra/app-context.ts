/**
 * The CDK context of `cdk.json` (feature flags and partitions): what the CLI hands the app on
 * every `cdk synth` and `cdk deploy`. Apps built in-process (the tests, tools/nag-report.ts)
 * start from it too, so that they synthesize what a deploy synthesizes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths.js';

/** The `context` object of the project's cdk.json. */
export const appContext = (): Record<string, unknown> =>
  (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
