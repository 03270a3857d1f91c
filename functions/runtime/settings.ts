/**
 * The service's runtime settings as the active profile says, for one function container: the
 * active profile and the applications' run state, read from the profiles table and reused for
 * {@link SETTINGS_CACHE_MS} after the read that produced them started. A change of the active
 * profile, of its settings or of an application's state therefore reaches every warm container
 * within that bound (10 s).
 *
 * A failed read (or one slower than {@link SETTINGS_READ_TIMEOUT_MS}) keeps what the container knew (or, before any read succeeded, the built-in
 * settings: the `default` profile, every application running) and is retried after
 * {@link SETTINGS_RETRY_MS}: the profiles table being unreachable never fails a request by
 * itself (a route that needs DynamoDB fails on its own read with a 503).
 */
import { APPLICATIONS, type ApplicationName } from '../platform/applications.js';
import { logger } from '../platform/logger.js';
import { DEFAULT_PROFILE_ID, builtInProfile, type Profile, type ProfileLogLevel } from './profile-model.js';
import type { ApplicationRun, RuntimeRecord } from './profile-store.js';

/** How long a container reuses the settings it read. */
export const SETTINGS_CACHE_MS = 10_000;
/** After a failed read, how long before the next attempt. */
export const SETTINGS_RETRY_MS = 1_000;
/**
 * How long a read may take before it counts as failed: a hung table must not hold every
 * request for the DynamoDB client's own limits (seconds) before the route's own work starts.
 */
export const SETTINGS_READ_TIMEOUT_MS = 1_000;

export interface SettingsSnapshot {
  readonly profile: Profile;
  readonly applications: Readonly<Record<ApplicationName, ApplicationRun>>;
}

export interface SettingsSource {
  active(signal?: AbortSignal): Promise<{ readonly runtime: RuntimeRecord; readonly profile: Profile }>;
}

export interface RuntimeSettings {
  /** The settings, read afresh when older than the cache period. */
  current(): Promise<SettingsSnapshot>;
  /** Drops what was read: the next `current` reads again. */
  forget(): void;
}

export interface RuntimeSettingsOptions {
  readonly ttlMs?: number;
  readonly retryMs?: number;
  readonly readTimeoutMs?: number;
  /** Clock in ms; injectable for tests. */
  readonly now?: () => number;
  /** The settings used before any read succeeded. */
  readonly fallback: () => SettingsSnapshot;
  /** Called with the new and the previous snapshot whenever a read brings a different one. */
  readonly onChange?: (next: SettingsSnapshot, previous: SettingsSnapshot | undefined) => void;
}

export const createRuntimeSettings = (source: () => Promise<SettingsSource>, options: RuntimeSettingsOptions): RuntimeSettings => {
  const ttlMs = options.ttlMs ?? SETTINGS_CACHE_MS;
  const retryMs = options.retryMs ?? SETTINGS_RETRY_MS;
  const readTimeoutMs = options.readTimeoutMs ?? SETTINGS_READ_TIMEOUT_MS;
  const now = options.now ?? (() => Date.now());
  let known: SettingsSnapshot | undefined;
  let fingerprint = '';
  let freshUntil = -Infinity;
  /** When the read whose outcome is applied began: an older read ending later changes nothing. */
  let appliedFrom = -Infinity;
  let pending: Promise<SettingsSnapshot> | undefined;

  const read = async (startedAt: number): Promise<SettingsSnapshot> => {
    const signal = AbortSignal.timeout(readTimeoutMs);
    try {
      const { runtime, profile } = await (await source()).active(signal);
      const next: SettingsSnapshot = { profile, applications: runtime.applications };
      if (startedAt < appliedFrom) return next;
      appliedFrom = startedAt;
      const print = JSON.stringify(next);
      if (print !== fingerprint) {
        const previous = known;
        known = next;
        fingerprint = print;
        options.onChange?.(next, previous);
      }
      freshUntil = startedAt + ttlMs;
      return next;
    } catch (error) {
      logger.warn('the active profile could not be read; keeping the settings known', { error, retryInMs: retryMs });
      if (startedAt >= appliedFrom) freshUntil = startedAt + retryMs;
      return known ?? options.fallback();
    }
  };

  const start = (): Promise<SettingsSnapshot> => {
    const started = read(now()).finally(() => {
      if (pending === started) pending = undefined;
    });
    pending = started;
    return started;
  };

  return {
    current() {
      if (known && now() < freshUntil) return Promise.resolve(known);
      if (!known && now() < freshUntil) return Promise.resolve(options.fallback());
      return pending ?? start();
    },
    forget() {
      freshUntil = -Infinity;
    },
  };
};

/** Every application running: the state before anything is stored. */
const ALL_RUNNING = Object.fromEntries(APPLICATIONS.map((name) => [name, { state: 'RUNNING' }])) as Record<ApplicationName, ApplicationRun>;

/** The built-in settings: the `default` profile as the service creates it, every application running. */
export const builtInSettings = (): SettingsSnapshot => ({
  profile: { id: DEFAULT_PROFILE_ID, active: true, ...builtInProfile() },
  applications: ALL_RUNNING,
});

/** The log level of an application (its own, else the profile's), or the profile's for a route of no application. */
export const logLevelOf = (snapshot: SettingsSnapshot, application?: ApplicationName): ProfileLogLevel =>
  (application ? snapshot.profile.applications[application].logLevel : undefined) ?? snapshot.profile.logLevel;

type Listener = (next: SettingsSnapshot, previous: SettingsSnapshot | undefined) => void;
const listeners = new Set<Listener>();

/** Runs `listener` whenever this container reads settings that differ from those it knew. */
export const onSettingsChange = (listener: Listener): void => {
  listeners.add(listener);
};

/**
 * The profiles table, when this function may read it (the stack sets `PROFILES_TABLE` for the
 * functions whose route needs it), read as the function loads. Only then is the store loaded:
 * functions that read no settings (`/status`) carry no DynamoDB client for it.
 */
const PROFILES_TABLE = process.env['PROFILES_TABLE'] || undefined;
const storeModule = PROFILES_TABLE ? import('./profile-store.js') : undefined;
let store: Promise<SettingsSource> | undefined;

const container: RuntimeSettings | undefined =
  PROFILES_TABLE && storeModule
    ? createRuntimeSettings(() => (store ??= storeModule.then((m) => m.createProfileStore(undefined, PROFILES_TABLE))), {
        fallback: builtInSettings,
        onChange: (next, previous) => {
          for (const listener of listeners) listener(next, previous);
        },
      })
    : undefined;

/** This container's settings, when its function may read the profiles table; undefined otherwise. */
export const containerSettings = (): RuntimeSettings | undefined => container;

/** The settings this invocation runs with: those the container holds (read within the cache period), else the built-in ones. */
export const currentSettings = async (): Promise<SettingsSnapshot> => (await containerSettings()?.current()) ?? builtInSettings();
