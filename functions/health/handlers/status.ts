/**
 * `GET /status` (public; replaces the removed `/isAlive`): the service answers, with its name
 * and version. Touches no dependency, so it stays cheap and says only "the code runs";
 * `GET /health/system` says whether the dependencies do.
 */
import { getStatus as validate } from '../../generated/validators.js';
import { json, staticHttpHandler } from '../../platform/http-core.js';
import { NO_STORE, SERVICE_NAME, SERVICE_VERSION } from '../about.js';

export interface StatusBody {
  readonly service: string;
  readonly version: string;
  readonly status: 'running';
}

/** The status document. */
export const statusBody = (): StatusBody => ({ service: SERVICE_NAME, version: SERVICE_VERSION, status: 'running' });

export const handler = staticHttpHandler({ operation: 'getStatus', validate }, async () => json(200, statusBody(), NO_STORE));
