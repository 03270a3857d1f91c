/**
 * POST /adapters: creates an adapter (201 + `Location`); 409 `adapter-exists` when one has the
 * name. The same write path as `PUT /adapters/{name}`, create-only. Honours `Idempotency-Key`:
 * a retry whose first answer was lost gets that 201 again, not a 409.
 */
import { createAdapter as validate } from '../../generated/validators.js';
import { parseReferencePrefixes } from '../../outbound/secrets/reference.js';
import { secretsBackend } from '../../outbound/secrets/resolver.js';
import { optionalEnv } from '../../platform/env.js';
import { httpHandler, json } from '../../runtime/http.js';
import { callerOf, idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { putAdapter, type AdapterInput } from '../service.js';
import { createAdapterStore } from '../store.js';
import { checkNewAdapterName, withEncRejection } from '../validate.js';

const store = createAdapterStore();
const localMode = optionalEnv('LOCAL_MODE', 'false') === 'true';
const referencePrefixes = parseReferencePrefixes(optionalEnv('SECRETS_REFERENCE_PREFIXES', ''));

/** The new adapter's path, under the collection as the client addressed it (stage included). */
const adapterLocation = (name: string, requestPath?: string): string => `${(requestPath ?? '/adapters').replace(/\/+$/, '')}/${encodeURIComponent(name)}`;

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<AdapterInput & { readonly name: string }>(
  { operation: 'createAdapter', validate: withEncRejection(validate), idempotency },
  async (event) => {
    const { name, ...input } = event.body;
    checkNewAdapterName(name, 'body', 'name');
    const { adapter } = await putAdapter({ store, secrets: secretsBackend, localMode, referencePrefixes }, name, input, 'create', callerOf(event));
    return json(201, adapter, { Location: adapterLocation(name, event.requestContext?.path) });
  },
);
