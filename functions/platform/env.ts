/**
 * Configuration read once, at module load, failing fast: a function that lacks a required
 * variable fails its first invocation with a clear message instead of misbehaving later.
 */
export const requiredEnv = (name: string, env: NodeJS.ProcessEnv = process.env): string => {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(`configuration error: environment variable ${name} is required`);
  }
  return value;
};

export const optionalEnv = (name: string, fallback: string, env: NodeJS.ProcessEnv = process.env): string => {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
};

/** An integer variable within bounds; anything else fails at load. */
export const integerEnv = (name: string, fallback: number, min: number, max: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`configuration error: ${name} must be an integer from ${min} to ${max}, got ${raw}`);
  }
  return value;
};

/**
 * The file a variable names, as an absolute path, or undefined when the variable is unset or
 * empty. A relative path resolves against `LAMBDA_TASK_ROOT` (the root of the function's code,
 * where the stack ships the deployment's files beside it); an absolute one is used as is.
 *
 * @throws a configuration error when the path is relative and `LAMBDA_TASK_ROOT` is not set.
 */
export const bundledFileFromEnv = (name: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const configured = env[name]?.trim();
  if (!configured) return undefined;
  // Obtained here, not imported: a function that names no file loads nothing for it.
  const path = process.getBuiltinModule('node:path');
  if (path.isAbsolute(configured)) return configured;
  const root = env['LAMBDA_TASK_ROOT'];
  if (!root) throw new Error(`configuration error: ${name} is a relative path (${configured}), and LAMBDA_TASK_ROOT, which it resolves against, is not set`);
  return path.resolve(root, configured);
};
