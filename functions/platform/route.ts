/**
 * What a route is: the types of the route table (`functions/api/routes.ts`) and the small
 * schema helpers its features share. Paths use API Gateway's `{name}` form for path parameters.
 */
import type { ApplicationName } from './applications.js';
import { CURSOR_MAX_LENGTH } from './cursor.js';
import type { JsonSchema } from './json-schema.js';

export const ROLES = ['admin', 'apiread'] as const;
export type Role = (typeof ROLES)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The DynamoDB tables a function may be granted, and how. */
export type TableKey = 'trees' | 'adapters' | 'idempotency' | 'compliance' | 'changelog' | 'profiles' | 'configs';
/**
 * `read`: reads only. `append`: reads, and PutItem of new items (the only write an append-only
 * table takes, `TableSpec.appendOnly`). `write`: reads and every item write.
 */
export type TableAccess = 'read' | 'append' | 'write';

/** The request parts a live route validates before its handler runs. */
export interface RequestSchema {
  pathParameters?: JsonSchema;
  queryStringParameters?: JsonSchema;
  headers?: JsonSchema;
  /** Required for POST, PUT and PATCH; optional (absent is fine) for the other methods. */
  body?: JsonSchema;
}

export interface LiveRoute {
  readonly method: HttpMethod;
  readonly path: string;
  /** Unique, camelCase; names the function, the validator and the OpenAPI operation. */
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** Module under `functions/` that exports `handler`, without extension. */
  readonly handler: string;
  /** Roles allowed to call the route; `public` routes have no authorizer. */
  readonly roles: readonly Role[] | 'public';
  readonly request: RequestSchema;
  /**
   * The application the route belongs to, derived from its path (`/orch_manager/…`; see
   * `platform/applications.ts`): while that application is stopped, the route answers 503.
   */
  readonly application?: ApplicationName;
  /** Documented answers, status → description. */
  readonly responses: Readonly<Record<number, string>>;
  readonly needs: {
    readonly tables?: Partial<Record<TableKey, TableAccess>>;
    /** Resolves `$VAULT_` references (and writes secrets when `write`). */
    readonly secrets?: 'read' | 'write';
    /** Calls orchestrators over the network. */
    readonly orchestrator?: boolean;
    /** Starts compliance batches (invokes the durable batch function). */
    readonly startsCompliance?: boolean;
    /** Starts remediation runs and their rollbacks (invokes the durable remediation function). */
    readonly startsRemediation?: boolean;
    /**
     * Creates, changes or deletes compliance plans' schedules (EventBridge Scheduler, in the
     * stack's schedule group; their target is the scheduled-run function).
     */
    readonly schedules?: boolean;
    /**
     * The configuration archive's bucket (its name in `CONFIGS_BUCKET`): `read` gets its
     * objects, `write` also puts them (and uses its KMS key to encrypt).
     */
    readonly configsBucket?: 'read' | 'write';
    /**
     * Serves the web console: the built console (`console/build.ts`) ships in the function's
     * bundle and the sign-in settings come in its environment (`functions/console/model.ts`).
     */
    readonly console?: boolean;
  };
  /**
   * The route also answers CSV (`Accept: text/csv` or `?format=csv`, `platform/csv.ts`): its
   * query takes `format` ({@link routeRequest}), its integration streams the function's answer
   * (API Gateway response streaming) and the OpenAPI document lists `text/csv` with these
   * columns, in this order.
   */
  readonly csv?: { readonly columns: readonly string[] };
  /**
   * Function timeout; defaults to the shared construct's. At most 28 s: API Gateway gives up
   * at 29 s and counts a cold start's init, which the function's own timeout does not.
   */
  readonly timeoutSeconds?: number;
}

/** `ANY` stands for a removed item listed without a method (every method answers 410). */
export type RemovedMethod = HttpMethod | 'ANY';

export interface RemovedRoute {
  readonly method: RemovedMethod;
  /** Path as the spec writes it, in `{name}` form. */
  readonly path: string;
  readonly description: string;
  readonly deprecatedIn: string;
  readonly removedIn: string;
  /** Each replacement as `METHOD /path` (or `/path` when the spec names no method); empty: none. */
  readonly replacement: readonly string[];
}

/** The spec's empty-object schema: no body, or `{}`; any property is 400. */
export const EMPTY_BODY = { type: 'object', additionalProperties: false, properties: {} } as const;
/** A case-insensitive choice of words, as a JSON Schema pattern (no inline regex flags). */
export const anyCase = (...words: string[]): string =>
  `^(?:${words.map((w) => [...w].map((c) => `[${c.toUpperCase()}${c.toLowerCase()}]`).join('')).join('|')})$`;

/**
 * The query of a paginated list: `limit` (1 to `max`, as digits) and the opaque `cursor` (the
 * `next` of the previous page; see functions/platform/cursor.ts). Nothing else is accepted.
 */
export const pageQuery = (max: number, defaultLimit: number, what = 'Page size'): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'string',
      pattern: `^(?:${Array.from({ length: max }, (_, i) => i + 1).join('|')})$`,
      description: `${what}: an integer from 1 to ${max} (default ${defaultLimit}).`,
    },
    cursor: {
      type: 'string',
      minLength: 1,
      // The longest token the cursor module issues and reads: a longer one could only be refused.
      maxLength: CURSOR_MAX_LENGTH,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'Continuation token: the `next` value of the previous page, passed back unchanged.',
    },
  },
});

/** The query parameter of every CSV route ({@link LiveRoute.csv}). */
const FORMAT_PARAMETER: JsonSchema = {
  type: 'string',
  enum: ['json', 'csv'],
  description: 'Answer as `json` (the default) or `csv` (RFC 4180, streamed, the whole list); wins over the `Accept` header.',
};

/**
 * A route's request as validated and documented: its own, and on a CSV route the `format`
 * query parameter (`json` or `csv`) besides its own.
 */
export const routeRequest = (route: Pick<LiveRoute, 'request' | 'csv'>): RequestSchema => {
  if (!route.csv) return route.request;
  const query = route.request.queryStringParameters ?? { type: 'object', additionalProperties: false, properties: {} };
  const properties = { ...(query['properties'] as Record<string, JsonSchema> | undefined), format: FORMAT_PARAMETER };
  return { ...route.request, queryStringParameters: { ...query, properties } };
};

/** The API Gateway resource path of a route: no trailing slash (the gateway matches both forms). */
export const resourcePath = (path: string): string => (path.length > 1 ? path.replace(/\/+$/, '') : path);

/** What runtime code needs of a route: no schemas, no documentation (see `functions/generated/route-index.ts`). */
export type IndexedRoute = Pick<LiveRoute, 'operationId' | 'method' | 'path' | 'roles' | 'application' | 'needs'>;
