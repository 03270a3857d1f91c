/** `GET /console/config.json` (public): how the console signs in (the identity provider's endpoints, its client id, scopes and roles claim). */
import { getConsoleConfig as validate } from '../../generated/validators.js';
import { configAnswer, consoleConfigFromEnv } from '../service.js';
import { consoleHandler } from '../wiring.js';

export const handler = consoleHandler({ operation: 'getConsoleConfig', validate }, async () => configAnswer(consoleConfigFromEnv()));
