/**
 * GET /schema/profiles: the JSON Schema of a profile, `{ schema }`: the very object the route
 * table gives `POST /profiles` to validate, so the two cannot drift.
 */
import { getProfileSchema as validate } from '../generated/validators.js';
import { httpHandler, json } from '../shared/http.js';
import { PROFILE_SCHEMA } from './model.js';

const body = { schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Profile', ...PROFILE_SCHEMA } };

export const handler = httpHandler({ operation: 'getProfileSchema', validate }, async () => json(200, body));
