/** PUT /applications/{name}/start: see `lifecycle.ts`. */
import { startApplication as validate } from '../../generated/validators.js';
import { lifecycleHandler } from '../lifecycle.js';

export const handler = lifecycleHandler('startApplication', 'start', validate);
