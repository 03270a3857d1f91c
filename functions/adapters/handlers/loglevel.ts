/**
 * PUT /adapters/{name}/loglevel `{ "level": "error" | "warn" | "info" | "debug" | "trace" }`: how
 * much the relay logs of the calls through this adapter (see `relay/call-log.ts`). Every warm
 * relay uses the new level within its adapter cache period (5 s by default). Recorded in the
 * adapter's changelog (`loglevel`); setting the level it already has changes nothing.
 */
import { setAdapterLogLevel as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { callerOf } from '../../platform/idempotency.js';
import type { AdapterLogLevel } from '../model.js';
import { setAdapterLogLevel } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();

export const handler = httpHandler<{ readonly level: AdapterLogLevel }>({ operation: 'setAdapterLogLevel', validate }, async (event) =>
  json(200, await setAdapterLogLevel({ store }, adapterNameFromPath(event.pathParameters?.['name']), event.body.level, callerOf(event))),
);
