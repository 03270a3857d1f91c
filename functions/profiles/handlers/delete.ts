/** DELETE /profiles/{id}: 204; 404 when absent; 409 `profile-active` for the active profile. */
import { deleteProfile as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { changeBy, profileIdFromPath, refusalsAsProblems } from '../service.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'deleteProfile', validate }, async (event) => {
  const id = profileIdFromPath(event);
  await refusalsAsProblems(id, () => store.delete(id, changeBy(event)));
  return noContent();
});
