/** The request schemas the application routes share with the application health routes. */
import { APPLICATIONS } from '../platform/applications.js';
import type { JsonSchema } from '../platform/json-schema.js';

/** An application name; an unknown one is a 404 (the handler's), so that the answer names the applications there are. */
export const APPLICATION_PARAMS: JsonSchema = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: APPLICATIONS.join(' or ') } },
};
export const NO_APPLICATION = 'No application has this name';
