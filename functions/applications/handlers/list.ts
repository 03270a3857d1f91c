/** GET /applications: every application's state, log level, settings (from the active profile) and routes. */
import { listApplications as validate } from '../../generated/validators.js';
import { APPLICATIONS } from '../../platform/applications.js';
import { httpHandler, json } from '../../runtime/http.js';
import { createProfileStore } from '../../runtime/profile-store.js';
import { applicationView } from '../service.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'listApplications', validate }, async () => {
  const { runtime, profile } = await store.active();
  return json(200, { items: APPLICATIONS.map((name) => applicationView(name, runtime, profile)) });
});
