/**
 * What the profile routes share: the id from the path, the change record (who, when), and the
 * mapping of refused writes to problems.
 */
import { callerOf } from '../platform/idempotency.js';
import type { HttpEvent } from '../runtime/http.js';
import { Conflict, type HttpProblem, NotFound } from '../platform/problem.js';
import { ProfileWriteRefused, type Change } from '../runtime/profile-store.js';

/** The profile id of the path (the validator checked its pattern). */
export const profileIdFromPath = (event: HttpEvent<unknown>): string => String(event.pathParameters?.['id'] ?? '');

/** Who makes the change (the token subject), and when. */
export const changeBy = (event: HttpEvent<unknown>, now = new Date()): Change => ({ now: now.toISOString(), by: callerOf(event) });

/** Runs a store write, turning a refusal into its problem (`what` names the profile in the detail). */
export const refusalsAsProblems = async <T>(what: string, write: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ProfileWriteRefused)) throw error;
    throw refusalProblem(what, error);
  }
};

const refusalProblem = (what: string, error: ProfileWriteRefused): HttpProblem => {
  switch (error.reason) {
    case 'exists':
      return new Conflict(`A profile with the id ${what} exists already.`, 'profile-exists');
    case 'case-twin':
      return new Conflict(`A profile with the id ${error.twin} exists already; profile ids are unique without regard to case.`, 'profile-exists');
    case 'not-found':
      return new NotFound(`No profile has the id ${what}.`);
    case 'active':
      return new Conflict(`The profile ${what} is active; activate another one (PUT /profiles/{id}/active) before deleting it.`, 'profile-active');
    case 'stopped':
      return new Conflict(`The application ${what} is stopped; start it (PUT /applications/${what}/start) instead of restarting it.`, 'application-stopped');
    case 'contended':
      return new Conflict(
        'Another change of the active profile or of the application landed meanwhile; nothing was changed. Read the state again and retry.',
        'profile-contended',
      );
  }
};

/** A profile's path, under the collection as the client addressed it (stage included). */
export const profileLocation = (id: string, requestPath?: string): string => `${(requestPath ?? '/profiles').replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
