/**
 * The official local runner of durable functions (`@aws/durable-execution-sdk-js-testing`),
 * loaded for local mode, the tests and the benchmark. The package reads `LOG_LEVEL` when it is
 * loaded and accepts only upper-case names (`WARN`), where this service's logger takes either
 * case: the variable is upper-cased for the import and restored after it.
 */
export type DurableTesting = typeof import('@aws/durable-execution-sdk-js-testing');

let loaded: Promise<DurableTesting> | undefined;

export const loadDurableTesting = (): Promise<DurableTesting> => {
  if (!loaded) {
    const level = process.env['LOG_LEVEL'];
    process.env['LOG_LEVEL'] = (level ?? 'error').toUpperCase();
    loaded = import('@aws/durable-execution-sdk-js-testing').finally(() => {
      if (level === undefined) delete process.env['LOG_LEVEL'];
      else process.env['LOG_LEVEL'] = level;
    });
  }
  return loaded;
};
