/** GET /applications/{name}: one application's state, log level, settings and routes. */
import { getApplication as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { createProfileStore } from '../../runtime/profile-store.js';
import { applicationFromPath, applicationView } from '../service.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'getApplication', validate }, async (event) => {
  const name = applicationFromPath(event);
  const { runtime, profile } = await store.active();
  return json(200, applicationView(name, runtime, profile));
});
