/**
 * PUT /adapters/{name}/restart: a new revision of a running adapter's record, so every warm
 * relay re-reads it and its password within its adapter cache period (5 s by default); then a
 * probe of the orchestrator with the password read afresh, reported in the answer as
 * `probe` (the health routes' probe: `GET /restconf`, never the address or credentials).
 */
import { restartAdapter as validate } from '../../generated/validators.js';
import { probeAdapter } from '../../health/adapter-probe.js';
import { secretResolver } from '../../outbound/secrets/resolver.js';
import { integerEnv, optionalEnv } from '../../platform/env.js';
import { createHttpClient } from '../../outbound/http-client.js';
import { httpHandler, json } from '../../runtime/http.js';
import { callerOf } from '../../platform/idempotency.js';
import { changeAdapterState } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();
const client = createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' });
const timeoutMs = integerEnv('HEALTH_ADAPTER_TIMEOUT_MS', 3_000, 100, 10_000);

export const handler = httpHandler({ operation: 'restartAdapter', validate }, async (event) => {
  const adapter = await changeAdapterState({ store }, adapterNameFromPath(event.pathParameters?.['name']), 'restart', callerOf(event));
  secretResolver.forget(adapter.auth.password);
  const { name: _name, type: _type, ...probe } = await probeAdapter(adapter, { client, secrets: secretResolver, timeoutMs });
  return json(200, { ...adapter, probe });
});
