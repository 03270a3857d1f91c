/**
 * POST /profiles: creates a profile, inactive (201 + `Location`); 409 `profile-exists` when the id
 * is taken, also by an id that differs only by case. Omitted settings take their defaults. Honours `Idempotency-Key` like the other POSTs.
 */
import { createProfile as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { profileSettings } from '../../runtime/profile-model.js';
import { changeBy, profileLocation, refusalsAsProblems } from '../service.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();
const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<{ readonly id: string }>({ operation: 'createProfile', validate, idempotency }, async (event) => {
  const { id, ...settings } = event.body;
  const profile = await refusalsAsProblems(id, () => store.create(id, profileSettings(settings), changeBy(event)));
  return json(201, profile, { Location: profileLocation(id, event.requestContext?.path) });
});
