/**
 * PUT /adapters/{name}: create (201) or replace (200) an adapter. A plain password is moved
 * to the secrets store first; only its `$VAULT_` reference reaches DynamoDB.
 */
import { putAdapter as validate } from '../../generated/validators.js';
import { parseReferencePrefixes } from '../../outbound/secrets/reference.js';
import { secretsBackend } from '../../outbound/secrets/resolver.js';
import { optionalEnv } from '../../platform/env.js';
import { httpHandler, json } from '../../runtime/http.js';
import { callerOf } from '../../platform/idempotency.js';
import { putAdapter, type AdapterInput } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath, checkNewAdapterName, withEncRejection } from '../validate.js';

const store = createAdapterStore();
const localMode = optionalEnv('LOCAL_MODE', 'false') === 'true';
// Secret paths an admin may name as `$VAULT_` references (see docs/adapters-and-relay.md).
const referencePrefixes = parseReferencePrefixes(optionalEnv('SECRETS_REFERENCE_PREFIXES', ''));

export const handler = httpHandler<AdapterInput>({ operation: 'putAdapter', validate: withEncRejection(validate) }, async (event) => {
  const name = adapterNameFromPath(event.pathParameters?.['name']);
  checkNewAdapterName(name, 'path', 'name');
  const { created, adapter } = await putAdapter({ store, secrets: secretsBackend, localMode, referencePrefixes }, name, event.body, 'upsert', callerOf(event));
  return json(created ? 201 : 200, adapter);
});
