/** The handlers of `PUT /adapters/{name}/start` and `/stop` (restart has its own: it probes). */
import { httpHandler, json, type CompiledValidator } from '../runtime/http.js';
import { callerOf } from '../platform/idempotency.js';
import { changeAdapterState, type LifecycleAction } from './service.js';
import { createAdapterStore, type AdapterStore } from './store.js';
import { adapterNameFromPath } from './validate.js';

let store: AdapterStore | undefined;

export const lifecycleHandler = (operation: string, action: Exclude<LifecycleAction, 'restart'>, validate: CompiledValidator) =>
  httpHandler({ operation, validate }, async (event) => {
    store ??= createAdapterStore();
    return json(200, await changeAdapterState({ store }, adapterNameFromPath(event.pathParameters?.['name']), action, callerOf(event)));
  });
