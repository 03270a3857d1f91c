/**
 * What API Gateway does around a Lambda authorizer, as pure functions: read the identity
 * sources (a missing one is 401 without calling the function), check the function's answer,
 * evaluate its policy against the method ARN as IAM does (`*` and `?` wildcards, an explicit
 * Deny wins, no Allow is a deny), and cache answers by identity for the authorizer's TTL.
 */

export interface IdentityRequest {
  /** Lower-case header names; duplicated headers joined with `,`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly stageVariables: Readonly<Record<string, string>> | null;
  readonly context: Readonly<Record<string, unknown>>;
}

/**
 * The values of the identity sources (`method.request.header.Authorization`,
 * `method.request.querystring.x`, `stageVariables.x`, `context.x`), or undefined when one is
 * missing or empty: API Gateway then answers 401 without calling the authorizer.
 */
export const identityValues = (sources: readonly string[], request: IdentityRequest): string[] | undefined => {
  const values: string[] = [];
  for (const source of sources) {
    let value: unknown;
    const header = /^method\.request\.header\.(.+)$/.exec(source);
    const query = /^method\.request\.querystring\.(.+)$/.exec(source);
    if (header) value = request.headers[header[1]!.toLowerCase()];
    else if (query) value = request.query[query[1]!];
    else if (source.startsWith('stageVariables.')) value = request.stageVariables?.[source.slice('stageVariables.'.length)];
    else if (source.startsWith('context.')) value = request.context[source.slice('context.'.length)];
    if (typeof value !== 'string' || value.trim() === '') return undefined;
    values.push(value);
  }
  return values;
};

export interface MethodArnParts {
  readonly region: string;
  readonly accountId: string;
  readonly apiId: string;
  readonly stage: string;
  readonly httpMethod: string;
  /** The request path without stage, e.g. `/adapters/lab-nso`. */
  readonly path: string;
}

/** `arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path without leading slash>`. */
export const methodArn = (p: MethodArnParts): string =>
  `arn:aws:execute-api:${p.region}:${p.accountId}:${p.apiId}/${p.stage}/${p.httpMethod}/${p.path.replace(/^\//, '')}`;

export interface PolicyStatement {
  readonly Effect?: unknown;
  readonly Action?: unknown;
  readonly NotAction?: unknown;
  readonly Resource?: unknown;
  readonly NotResource?: unknown;
  readonly Condition?: unknown;
}

export type PolicyDecision = 'allow' | 'deny' | 'explicit-deny';

const list = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');

/** IAM's wildcard match: `*` any run of characters (`/` included), `?` exactly one. */
export const wildcardMatch = (pattern: string, value: string, ignoreCase = false): boolean => {
  const source = pattern
    .replaceAll(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
};

const INVOKE = 'execute-api:Invoke';

const applies = (statement: PolicyStatement, arn: string): boolean => {
  // Conditions are not evaluated locally: a statement with one never applies (see docs/local-mode.md).
  if (statement.Condition !== undefined) return false;
  const actionOk =
    statement.Action !== undefined
      ? list(statement.Action).some((a) => wildcardMatch(a, INVOKE, true))
      : statement.NotAction !== undefined && !list(statement.NotAction).some((a) => wildcardMatch(a, INVOKE, true));
  if (!actionOk) return false;
  return statement.Resource !== undefined
    ? list(statement.Resource).some((r) => wildcardMatch(r, arn))
    : statement.NotResource !== undefined && !list(statement.NotResource).some((r) => wildcardMatch(r, arn));
};

/** Evaluates a policy document for `execute-api:Invoke` on `arn`. */
export const evaluatePolicy = (policy: { Statement?: unknown }, arn: string): PolicyDecision => {
  const statements = (Array.isArray(policy.Statement) ? policy.Statement : policy.Statement ? [policy.Statement] : []) as PolicyStatement[];
  let allowed = false;
  for (const statement of statements) {
    if (!applies(statement, arn)) continue;
    if (statement.Effect === 'Deny') return 'explicit-deny';
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed ? 'allow' : 'deny';
};

/** A checked authorizer answer. */
export interface AuthorizerGrant {
  readonly principalId: string;
  readonly policy: { readonly Statement?: unknown };
  /** Flat context values, as strings, as the proxy event carries them. */
  readonly context: Readonly<Record<string, string>>;
}

/**
 * Checks an authorizer's answer as API Gateway does: `principalId` and a policy document
 * with statements are required; context values must be strings, numbers or booleans.
 * Undefined means a malformed answer (AUTHORIZER_CONFIGURATION_ERROR, 500).
 */
export const parseAuthorizerResult = (result: unknown): AuthorizerGrant | undefined => {
  if (!result || typeof result !== 'object') return undefined;
  const r = result as { principalId?: unknown; policyDocument?: unknown; context?: unknown };
  if (typeof r.principalId !== 'string' && typeof r.principalId !== 'number') return undefined;
  const policy = r.policyDocument;
  if (!policy || typeof policy !== 'object' || !('Statement' in policy)) return undefined;
  const context = Object.create(null) as Record<string, string>;
  if (r.context !== undefined && r.context !== null) {
    if (typeof r.context !== 'object' || Array.isArray(r.context)) return undefined;
    for (const [k, v] of Object.entries(r.context)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') context[k] = String(v);
      else if (v !== null && v !== undefined) return undefined;
    }
  }
  return { principalId: String(r.principalId), policy: policy as AuthorizerGrant['policy'], context };
};

/** Answers by identity, each kept for the authorizer's TTL (seconds). A TTL of 0 caches nothing. */
export class AuthorizerCache {
  readonly #entries = new Map<string, { grant: AuthorizerGrant; expires: number }>();

  constructor(
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): AuthorizerGrant | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.grant;
  }

  set(key: string, grant: AuthorizerGrant): void {
    if (this.ttlSeconds <= 0) return;
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { grant, expires: this.now() + this.ttlSeconds * 1000 });
  }
}
