/**
 * `GET /console` (public): the console's page. Its asset URLs are absolute under the request's
 * own base path (the stage, or a custom domain's base path), since API Gateway serves `/console/`
 * as `/console` and a relative URL would resolve differently for each.
 */
import { getConsole as validate } from '../../generated/validators.js';
import { bundledConsole, consoleHandler } from '../wiring.js';

export const handler = consoleHandler({ operation: 'getConsole', validate }, async (event) => bundledConsole().page(event.requestContext?.path));
