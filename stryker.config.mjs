// Mutation testing of the code that guards users: `npm run mutate` runs Stryker with this file,
// then writes docs/reports/mutation.md (tools/mutation/run.ts; docs/development.md).
// Not part of CI: a full run takes tens of minutes on two cores.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  checkers: ['typescript'],
  // Mutants live in functions/: type-checking them against the functions alone (1,159 files
  // instead of the 4,383 the CDK and test types pull in) halves the checker's time per mutant.
  tsconfigFile: 'tsconfig.mutation.json',
  // Each mutant runs only the tests that executed its code in the dry run.
  coverageAnalysis: 'perTest',
  // A mutant in module-level code (constants, tables) is covered by every test: running the
  // whole suite for each of them costs hours. Those values are checked by the tests that use
  // them (the route table, the generated validators, the OpenAPI document).
  ignoreStatic: true,
  // The machine is shared; one worker, one module at a time is the intended use.
  concurrency: 1,
  timeoutMS: 20_000,
  mutate: [
    'functions/authorizer/**/*.ts',
    'functions/outbound/target.ts',
    'functions/outbound/http-client.ts',
    'functions/relay/media-type.ts',
    'functions/outbound/address-policy.ts',
    'functions/outbound/secrets/*.ts',
    'functions/adapters/store.ts',
    'functions/adapters/service.ts',
    'functions/platform/idempotency.ts',
    'functions/platform/idempotency-store.ts',
    'functions/platform/problem.ts',
    'functions/platform/logger.ts',
    'functions/platform/redaction.ts',
    'functions/remediation/generate.ts',
    'functions/remediation/patch.ts',
    'functions/trees/rules.ts',
    'functions/trees/rule-matches.ts',
    'functions/trees/predicates.ts',
    'functions/trees/compare.ts',
    'functions/trees/pointers.ts',
    'functions/trees/addresses.ts',
    'functions/trees/decimals.ts',
    'functions/compliance/grading.ts',
  ],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
