/**
 * The handlers of `PUT /applications/{name}/stop`, `/start` and `/restart`.
 *
 * - stop: every route of the application answers 503 `application-stopped` with `Retry-After`
 *   (each warm function sees the state within the settings cache period, 10 s); the routes of
 *   other applications, and of applications, profiles and health, keep answering.
 * - start: it serves again within the same bound. Stop on a stopped application and start on a
 *   running one change nothing (200).
 * - restart (running only; 409 when stopped): records the restart; every warm function of the
 *   application that sees it drops what it cached (adapters, secrets) and runs with the settings
 *   it has just read. The answer shows the settings read afresh.
 */
import { httpHandler, json, type CompiledValidator } from '../runtime/http.js';
import { changeBy, refusalsAsProblems } from '../profiles/service.js';
import { createProfileStore, type ProfileStore } from '../runtime/profile-store.js';
import { applicationFromPath, applicationView } from './service.js';

let store: ProfileStore | undefined;

export const lifecycleHandler = (operation: string, action: 'stop' | 'start' | 'restart', validate: CompiledValidator) =>
  httpHandler({ operation, validate }, async (event) => {
    store ??= createProfileStore();
    const name = applicationFromPath(event);
    await refusalsAsProblems(name, () => store!.setApplicationState(name, action, changeBy(event)));
    const { runtime, profile } = await store.active();
    return json(200, applicationView(name, runtime, profile));
  });
