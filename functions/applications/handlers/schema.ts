/**
 * GET /schema/applications/{name}: the JSON Schema of the application's settings, `{ schema }`:
 * the object the profile schema embeds and `PUT /applications/{name}` enforces.
 */
import { getApplicationSchema as validate } from '../../generated/validators.js';
import { json, staticHttpHandler } from '../../platform/http-core.js';
import { APPLICATION_SETTINGS_SCHEMAS } from '../../runtime/profile-model.js';
import { applicationFromPath } from '../service.js';

export const handler = staticHttpHandler({ operation: 'getApplicationSchema', validate }, async (event) => {
  const name = applicationFromPath(event);
  return json(200, {
    name,
    schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: `Settings of ${name}`, ...APPLICATION_SETTINGS_SCHEMAS[name] },
  });
});
