import { tmpdir } from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { HANG_MS } from './test/support/timeouts.js';

/**
 * Test files whose work is CPU-bound and long: they synthesize the CDK app, bundle the
 * functions, start the local stack or spawn Node processes. Nothing they do has a deadline;
 * their timeouts only catch a hang, so they are generous enough that a loaded machine cannot
 * reach them (a hang still ends the run well within CI's budget).
 */
export const BUILD_TESTS = [
  'test/infra/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'test/unit/openapi-lint.test.ts',
  'test/integration/authorizer-local-token.test.ts',
  'test/integration/secrets-local.test.ts',
];

/** The settings every test file runs with, whichever project it belongs to. */
export const COMMON_TEST_SETTINGS = {
  globalSetup: ['test/support/global-setup.ts'],
  // Lambda's runtime globals (response streaming), before any handler module loads.
  setupFiles: ['test/support/lambda-runtime.ts'],
  // Two cores: more workers only contend with DynamoDB Local and the simulators.
  maxWorkers: 2,
  env: {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    LOG_LEVEL: 'warn',
    METRICS_DISABLED: 'true',
    // The roles a route function lets through (the stack sets its route's on each function): the
    // handlers under test serve routes of either role; test/unit/route-authorization.test.ts sets each route's own.
    ROUTE_ROLES: 'admin,apiread',
    // The fingerprint key of keyed requests, as the local stack keeps one (created at first use).
    IDEMPOTENCY_KEY_FILE: path.join(tmpdir(), 'netconfig-vitest', 'idempotency.key'),
  },
};

/** Every other test: in-process work whose timeouts still only catch a hang. */
export const SERVICE_TIMEOUTS = { testTimeout: 30_000, hookTimeout: 120_000 };

export default defineConfig({
  test: {
    ...COMMON_TEST_SETTINGS,
    // Two projects split the files (each runs once, in one of them) only to give each its timeouts.
    projects: [
      {
        extends: true,
        test: { name: 'service', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...BUILD_TESTS], ...SERVICE_TIMEOUTS },
      },
      { extends: true, test: { name: 'build', include: BUILD_TESTS, testTimeout: HANG_MS, hookTimeout: 2 * HANG_MS } },
    ],
  },
});
