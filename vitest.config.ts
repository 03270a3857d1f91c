import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more workers only contend with DynamoDB Local and the simulators.
    maxWorkers: 2,
    env: {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      LOG_LEVEL: 'warn',
      METRICS_DISABLED: 'true',
      // The fingerprint key of keyed requests, as the local stack keeps one (created at first use).
      IDEMPOTENCY_KEY_FILE: path.join(tmpdir(), 'netconfig-vitest', 'idempotency.key'),
    },
  },
});
