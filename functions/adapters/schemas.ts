/** The request schemas of the adapter routes (`routes.ts`). */
import type { JsonSchema } from '../platform/json-schema.js';

/**
 * An adapter name as API Gateway passes it: still percent-encoded (`nso%20lab`). The handler
 * decodes it and applies the rule (1 to 128 letters, digits, space, `-`, `_`, `.`).
 */
export const ADAPTER_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 384,
  description: '1 to 128 letters, digits, spaces, "-", "_" or "." (percent-encoded in the URL)',
} as const;
/** The 409 of an adapter write that lost the race against other writes three times in a row. */
export const ADAPTER_CHANGED = 'Other requests kept changing the adapter meanwhile (`adapter-changed`); nothing was changed';
export const ADAPTER_PARAMS: JsonSchema = { type: 'object', required: ['name'], properties: { name: ADAPTER_NAME } };
/** The body of `PUT /adapters/{name}`: the JSON Schema of the adapter type `nso` (also served by `GET /schema/adapters/{name}`). */
export const ADAPTER_BODY: JsonSchema = {
  type: 'object',
  required: ['type', 'baseUrl', 'auth'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['nso'], description: 'Orchestrator type' },
    baseUrl: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'http(s)://host[:port], no path, query, fragment or credentials; stored as its origin',
    },
    auth: {
      type: 'object',
      required: ['type', 'username', 'password'],
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: ['basic'] },
        username: { type: 'string', minLength: 1, maxLength: 256 },
        password: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          description: 'A $VAULT_<path>#<key> reference, or the plain value (stored in the secrets store, replaced by its reference)',
        },
      },
    },
    timeoutMs: {
      type: 'integer',
      minimum: 100,
      maximum: 25000,
      description: "Per-call timeout of the relay; absent: the active profile's orch_manager.orchestratorTimeoutMs (default 10000)",
    },
    complianceConcurrency: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      description: 'Concurrent configuration fetches of one compliance batch through this adapter; default 10',
    },
    nsoCommitParams: {
      type: 'string',
      enum: ['query', 'params'],
      description:
        'How remediation sends commit parameters (dry-run, rollback label, commit queue) to this NSO: "query", the separate query parameters of NSO before 6.7; "params", the one params query value of NSO 6.7 and later. Default "query"',
    },
  },
};
