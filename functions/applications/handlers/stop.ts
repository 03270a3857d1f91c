/** PUT /applications/{name}/stop: see `lifecycle.ts`. */
import { stopApplication as validate } from '../../generated/validators.js';
import { lifecycleHandler } from '../lifecycle.js';

export const handler = lifecycleHandler('stopApplication', 'stop', validate);
