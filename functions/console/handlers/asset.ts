/** `GET /console/assets/{file}` (public): a hashed asset of the console, cached for a year; 404 for a name the build did not make. */
import { getConsoleAsset as validate } from '../../generated/validators.js';
import { bundledConsole, consoleHandler } from '../wiring.js';

export const handler = consoleHandler({ operation: 'getConsoleAsset', validate }, async (event) =>
  bundledConsole().asset(String(event.pathParameters?.['file'] ?? '')),
);
