/**
 * The suite as mutation testing runs it (stryker.config.mjs): everything but the tests that
 * run the functions out of process (the local gateway's worker threads, where Stryker cannot
 * see which mutant ran) or that take minutes per run (load, fuzzing, DynamoDB restarts, CDK
 * synthesis). Each of those would run again for every mutant it covers.
 */
import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export const MUTATION_EXCLUDED_TESTS = [
  'test/e2e/**',
  'test/infra/**',
  'test/robustness/load.test.ts',
  'test/robustness/fuzz-routes.test.ts',
  'test/robustness/faults-dynamodb.test.ts',
];

export default mergeConfig(base, defineConfig({ test: { exclude: [...configDefaults.exclude, ...MUTATION_EXCLUDED_TESTS] } }));
