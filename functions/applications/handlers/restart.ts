/** PUT /applications/{name}/restart: see `lifecycle.ts`. */
import { restartApplication as validate } from '../../generated/validators.js';
import { lifecycleHandler } from '../lifecycle.js';

export const handler = lifecycleHandler('restartApplication', 'restart', validate);
