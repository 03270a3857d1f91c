/**
 * The suite as mutation testing runs it (stryker.config.mjs): everything but the tests that
 * run the functions out of process (the local gateway's worker threads, where Stryker cannot
 * see which mutant ran) or that take minutes per run (load, fuzzing, DynamoDB restarts, CDK
 * synthesis). Each of those would run again for every mutant it covers.
 */
import { configDefaults, defineConfig } from 'vitest/config';
import { COMMON_TEST_SETTINGS, SERVICE_TIMEOUTS } from './vitest.config.js';

export const MUTATION_EXCLUDED_TESTS = [
  'test/e2e/**',
  'test/infra/**',
  'test/robustness/load.test.ts',
  'test/robustness/fuzz-routes.test.ts',
  'test/robustness/faults-dynamodb.test.ts',
];

// One project: the split of vitest.config.ts only sets timeouts, and these runs are not loaded.
export default defineConfig({
  test: {
    ...COMMON_TEST_SETTINGS,
    ...SERVICE_TIMEOUTS,
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...MUTATION_EXCLUDED_TESTS],
  },
});
