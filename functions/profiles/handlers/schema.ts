/**
 * GET /schema/profiles: the JSON Schema of a profile, `{ schema }`: the very object the route
 * table gives `POST /profiles` to validate, so the two cannot drift.
 */
import { getProfileSchema as validate } from '../../generated/validators.js';
import { json, staticHttpHandler } from '../../platform/http-core.js';
import { PROFILE_SCHEMA } from '../../runtime/profile-model.js';

const body = { schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Profile', ...PROFILE_SCHEMA } };

export const handler = staticHttpHandler({ operation: 'getProfileSchema', validate }, async () => json(200, body));
