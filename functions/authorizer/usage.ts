/**
 * Which usage plan a caller of the relay counts against. The API takes its API key from the
 * authorizer (key source `AUTHORIZER`): the authorizer answers `usageIdentifierKey`, the value
 * of the API key of the caller's usage plan, and API Gateway applies that plan's throttle and
 * quota to the methods that require a key (the relay). The key values are identifiers the stack
 * derives from the client names, not secrets: a caller cannot send one (`x-api-key` is ignored
 * with this key source), only the authorizer names it.
 *
 * The stack writes the mapping into `USAGE_PLAN_KEYS` (infra/constructs/api-exposure.ts).
 */

/** One named client: its key, and the token subjects and client ids that identify it. */
export interface UsageClient {
  readonly key: string;
  readonly subjects: readonly string[];
  readonly clientIds: readonly string[];
}

/** The mapping from callers to usage-plan keys. */
export interface UsageKeys {
  /** The token claim holding the client id. */
  readonly claim: string;
  /** The key of every caller no client names. */
  readonly defaultKey: string;
  readonly clients: readonly UsageClient[];
}

/** The caller as the mapping sees it: its subject and, when the token has one, its client id. */
export interface UsageCaller {
  readonly sub: string;
  readonly clientId?: string;
}

/**
 * The key of a caller: the client naming its subject, else the client naming its client id,
 * else the default. A subject names one principal, a client id a whole application: the more
 * specific match wins when both name a client.
 */
export const usageKeyFor = (keys: UsageKeys, caller: UsageCaller): string =>
  keys.clients.find((c) => c.subjects.includes(caller.sub))?.key ??
  (caller.clientId === undefined ? undefined : keys.clients.find((c) => c.clientIds.includes(caller.clientId!))?.key) ??
  keys.defaultKey;

/** The mapping as the environment carries it (compact JSON: Lambda allows 4 KB of environment per function). */
export const serializeUsageKeys = (keys: UsageKeys): string =>
  JSON.stringify({ claim: keys.claim, default: keys.defaultKey, clients: keys.clients.map((c) => [c.key, c.subjects, c.clientIds]) });

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string' && v.length > 0);

/**
 * Reads {@link serializeUsageKeys}' text. Throws on anything else: the stack writes it, so a bad
 * value is a deployment fault that must stop the authorizer at its start, not send every caller
 * of the relay to 403.
 */
export const parseUsageKeys = (text: string): UsageKeys => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('USAGE_PLAN_KEYS: not JSON');
  }
  const { claim, default: defaultKey, clients } = (raw ?? {}) as Record<string, unknown>;
  if (typeof claim !== 'string' || !claim || typeof defaultKey !== 'string' || !defaultKey || !Array.isArray(clients))
    throw new Error('USAGE_PLAN_KEYS: needs claim, default and clients');
  return {
    claim,
    defaultKey,
    clients: clients.map((entry, i) => {
      const [key, subjects, clientIds] = Array.isArray(entry) ? entry : [];
      if (typeof key !== 'string' || !key || !isStrings(subjects) || !isStrings(clientIds))
        throw new Error(`USAGE_PLAN_KEYS: client ${i} must be [key, subjects, clientIds]`);
      return { key, subjects, clientIds };
    }),
  };
};
