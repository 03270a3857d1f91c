/** PUT /adapters/{name}/stop: the relay and compliance refuse the adapter (409 `adapter-stopped`) until it is started. */
import { stopAdapter as validate } from '../../generated/validators.js';
import { lifecycleHandler } from '../lifecycle.js';

export const handler = lifecycleHandler('stopAdapter', 'stop', validate);
