/**
 * Configuration read once, at module load, failing fast: a function that lacks a required
 * variable fails its first invocation with a clear message instead of misbehaving later.
 */
export const requiredEnv = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`configuration error: environment variable ${name} is required`);
  }
  return value;
};

export const optionalEnv = (name: string, fallback: string): string => {
  const value = process.env[name];
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
