import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_PROFILE_ID, profileSettings, type Profile } from '../../functions/runtime/profile-model.js';
import type { RuntimeRecord } from '../../functions/runtime/profile-store.js';
import {
  SETTINGS_CACHE_MS,
  SETTINGS_RETRY_MS,
  builtInSettings,
  createRuntimeSettings,
  logLevelOf,
  type SettingsSource,
} from '../../functions/runtime/settings.js';

const running: RuntimeRecord['applications'] = { orch_manager: { state: 'RUNNING' }, configuration_manager: { state: 'RUNNING' } };
const profile = (id: string, logLevel: Profile['logLevel']): Profile => ({ id, active: true, ...profileSettings({ logLevel }) });

/** A source whose answer the test changes, counting reads; `fail` makes reads throw. */
const source = () => {
  const state = {
    reads: 0,
    fail: false,
    answer: { runtime: { activeProfile: 'a', applications: running, stored: true } as RuntimeRecord, profile: profile('a', 'info') },
  };
  const src: SettingsSource = {
    active: async () => {
      state.reads++;
      if (state.fail) throw new Error('unreachable');
      return state.answer;
    },
  };
  return { state, src };
};

describe('runtime settings', () => {
  it('reuses what it read for the cache period, then reads again', async () => {
    let now = 1_000;
    const { state, src } = source();
    const settings = createRuntimeSettings(async () => src, { now: () => now, fallback: builtInSettings });
    expect((await settings.current()).profile.id).toBe('a');
    state.answer = { ...state.answer, profile: profile('b', 'debug') };
    now += SETTINGS_CACHE_MS - 1;
    expect((await settings.current()).profile.id).toBe('a');
    now += 1;
    expect((await settings.current()).profile.id).toBe('b');
    expect(state.reads).toBe(2);
  });

  it('shares one read between concurrent callers', async () => {
    const { state, src } = source();
    const settings = createRuntimeSettings(async () => src, { now: () => 0, fallback: builtInSettings });
    await Promise.all([settings.current(), settings.current(), settings.current()]);
    expect(state.reads).toBe(1);
  });

  it('keeps the known settings when a read fails, and retries after the retry period', async () => {
    let now = 0;
    const { state, src } = source();
    const settings = createRuntimeSettings(async () => src, { now: () => now, fallback: builtInSettings });
    await settings.current();
    state.fail = true;
    now += SETTINGS_CACHE_MS;
    expect((await settings.current()).profile.id).toBe('a');
    state.fail = false;
    state.answer = { ...state.answer, profile: profile('c', 'warn') };
    now += SETTINGS_RETRY_MS - 1;
    expect((await settings.current()).profile.id).toBe('a');
    now += 1;
    expect((await settings.current()).profile.id).toBe('c');
  });

  it('runs on the built-in settings when the first read fails', async () => {
    const { state, src } = source();
    state.fail = true;
    const settings = createRuntimeSettings(async () => src, { now: () => 0, fallback: builtInSettings });
    const snapshot = await settings.current();
    expect(snapshot.profile.id).toBe(DEFAULT_PROFILE_ID);
    expect(snapshot.applications.orch_manager.state).toBe('RUNNING');
  });

  it('gives up on a read that hangs past its time limit and runs on what it knew', async () => {
    const hanging: SettingsSource = {
      active: (signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
    };
    const settings = createRuntimeSettings(async () => hanging, { now: () => 0, readTimeoutMs: 20, fallback: builtInSettings });
    const started = performance.now();
    expect((await settings.current()).profile.id).toBe(DEFAULT_PROFILE_ID);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('tells listeners about a changed snapshot only', async () => {
    let now = 0;
    const { state, src } = source();
    const onChange = vi.fn();
    const settings = createRuntimeSettings(async () => src, { now: () => now, fallback: builtInSettings, onChange });
    await settings.current();
    now += SETTINGS_CACHE_MS;
    await settings.current();
    expect(onChange).toHaveBeenCalledTimes(1);
    state.answer = { ...state.answer, runtime: { ...state.answer.runtime, applications: { ...running, orch_manager: { state: 'STOPPED' } } } };
    now += SETTINGS_CACHE_MS;
    await settings.current();
    expect(onChange).toHaveBeenCalledTimes(2);
    expect(onChange.mock.calls[1]![0].applications.orch_manager.state).toBe('STOPPED');
  });

  it("logs an application at its own level, else at the profile's", () => {
    const base = builtInSettings();
    const own = {
      ...base,
      profile: {
        ...base.profile,
        logLevel: 'warn' as const,
        applications: { ...base.profile.applications, orch_manager: { ...base.profile.applications.orch_manager, logLevel: 'trace' as const } },
      },
    };
    expect(logLevelOf(own, 'orch_manager')).toBe('trace');
    expect(logLevelOf(own, 'configuration_manager')).toBe('warn');
    expect(logLevelOf(own)).toBe('warn');
  });
});

describe('profile settings', () => {
  it('fills every omitted setting with its default', () => {
    expect(profileSettings({})).toEqual({
      logLevel: 'warn', // vitest sets LOG_LEVEL=warn: the deployment's level is the built-in one
      applications: {
        orch_manager: { orchestratorTimeoutMs: 10_000, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 },
        configuration_manager: { complianceConcurrency: 10, reportRetentionDays: 90, configRetentionDays: 365, historyRetentionDays: 400 },
      },
    });
  });

  it('takes a former environment variable, as the function loads, as the built-in default', async () => {
    vi.stubEnv('COMPLIANCE_RETENTION_DAYS', '30');
    vi.resetModules();
    try {
      const fresh = await import('../../functions/runtime/profile-model.js');
      vi.stubEnv('COMPLIANCE_RETENTION_DAYS', '60');
      expect(fresh.profileSettings({}).applications.configuration_manager.reportRetentionDays).toBe(30);
      expect(
        fresh.profileSettings({ applications: { configuration_manager: { reportRetentionDays: 7 } } }).applications.configuration_manager.reportRetentionDays,
      ).toBe(7);
      expect(() => fresh.builtInDefaults({ ADAPTER_CACHE_TTL_SECONDS: '301' })).toThrow(/ADAPTER_CACHE_TTL_SECONDS must be an integer from 0 to 300/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
