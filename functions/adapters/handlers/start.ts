/** PUT /adapters/{name}/start: a stopped adapter runs again (a running one is left as it is). */
import { startAdapter as validate } from '../../generated/validators.js';
import { lifecycleHandler } from '../lifecycle.js';

export const handler = lifecycleHandler('startAdapter', 'start', validate);
