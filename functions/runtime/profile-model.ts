/**
 * Profiles: named sets of the service's runtime settings, exactly one active. This module holds
 * their JSON Schemas (the route table validates writes with them and `GET /schema/profiles`
 * serves them: the same objects, so the two cannot drift), the built-in defaults, and the types.
 */
import type { JsonSchema } from '../platform/json-schema.js';
import type { ApplicationName } from '../platform/applications.js';
import { LOG_LEVELS, isLogLevel, type LogLevel } from '../platform/logger.js';

export { LOG_LEVELS };
export type ProfileLogLevel = LogLevel;

/** The profile that exists and is active before any other is made. */
export const DEFAULT_PROFILE_ID = 'default';
export const PROFILE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * Bounds and built-in defaults of the numeric settings: the defaults of the environment
 * variables that set them before profiles existed (`env`), which still set the built-in
 * default when a deployment gives them.
 */
export const SETTING_BOUNDS = {
  orchestratorTimeoutMs: { minimum: 100, maximum: 25_000, default: 10_000, env: undefined },
  adapterCacheSeconds: { minimum: 0, maximum: 300, default: 5, env: 'ADAPTER_CACHE_TTL_SECONDS' },
  maxConcurrentCallsPerAdapter: { minimum: 0, maximum: 1_000, default: 0, env: undefined },
  complianceConcurrency: { minimum: 1, maximum: 100, default: 10, env: 'COMPLIANCE_CONCURRENCY' },
  reportRetentionDays: { minimum: 1, maximum: 3_650, default: 90, env: 'COMPLIANCE_RETENTION_DAYS' },
  configRetentionDays: { minimum: 1, maximum: 3_650, default: 365, env: undefined },
  historyRetentionDays: { minimum: 1, maximum: 3_650, default: 400, env: undefined },
} as const;
export type NumericSetting = keyof typeof SETTING_BOUNDS;

const integer = (key: NumericSetting, description: string): JsonSchema => {
  const { minimum, maximum, default: fallback } = SETTING_BOUNDS[key];
  return { type: 'integer', minimum, maximum, default: fallback, description };
};
const logLevel = (description: string): JsonSchema => ({ type: 'string', enum: [...LOG_LEVELS], description });

export interface OrchManagerSettings {
  readonly logLevel?: ProfileLogLevel;
  readonly orchestratorTimeoutMs: number;
  readonly adapterCacheSeconds: number;
  readonly maxConcurrentCallsPerAdapter: number;
}

export interface ConfigurationManagerSettings {
  readonly logLevel?: ProfileLogLevel;
  readonly complianceConcurrency: number;
  readonly reportRetentionDays: number;
  readonly configRetentionDays: number;
  readonly historyRetentionDays: number;
}

export interface ApplicationSettings {
  readonly orch_manager: OrchManagerSettings;
  readonly configuration_manager: ConfigurationManagerSettings;
}

/** The settings of a profile, every default filled in. */
export interface ProfileSettings {
  readonly description?: string;
  readonly logLevel: ProfileLogLevel;
  readonly applications: ApplicationSettings;
}

/** A stored profile as the API shows it. */
export interface Profile extends ProfileSettings {
  readonly id: string;
  readonly active: boolean;
  readonly created?: string;
  readonly createdBy?: string;
  readonly lastUpdated?: string;
  readonly lastUpdatedBy?: string;
}

/** The JSON Schema of each application's settings: `PUT /applications/{name}` bodies, `GET /schema/applications/{name}`. */
export const APPLICATION_SETTINGS_SCHEMAS: Readonly<Record<ApplicationName, JsonSchema>> = {
  orch_manager: {
    type: 'object',
    additionalProperties: false,
    properties: {
      logLevel: logLevel("The relay's log level; absent: the profile's logLevel"),
      orchestratorTimeoutMs: integer('orchestratorTimeoutMs', 'Per-call orchestrator timeout (ms) when the adapter sets no timeoutMs'),
      adapterCacheSeconds: integer('adapterCacheSeconds', 'How long a warm relay reuses an adapter it read (s); 0 reads it on every call'),
      maxConcurrentCallsPerAdapter: integer(
        'maxConcurrentCallsPerAdapter',
        'Relay calls in flight through one adapter at once, across every container (more answer 429 with Retry-After); 0: no limit',
      ),
    },
  },
  configuration_manager: {
    type: 'object',
    additionalProperties: false,
    properties: {
      logLevel: logLevel("The trees' and compliance functions' log level; absent: the profile's logLevel"),
      complianceConcurrency: integer(
        'complianceConcurrency',
        'Concurrent configuration fetches of one compliance batch, unless the adapter sets its own complianceConcurrency',
      ),
      reportRetentionDays: integer('reportRetentionDays', 'How long a compliance batch and its reports are kept (days), counted from its start'),
      configRetentionDays: integer(
        'configRetentionDays',
        "How long each configuration a batch fetches is kept in the history (days), counted from when it was taken; the archive bucket's lifecycle follows within the hour",
      ),
      historyRetentionDays: integer(
        'historyRetentionDays',
        "How long a compliance plan's history is kept (days): its trend points and each device's points and rule states, counted from the batch that wrote them",
      ),
    },
  },
};

/** The body of `PUT /profiles/{id}`: every setting of a profile; an omitted one takes its default. */
export const PROFILE_SETTINGS_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    description: { type: 'string', maxLength: 1024 },
    logLevel: { ...logLevel("The service's log level, unless an application sets its own"), default: 'info' },
    applications: {
      type: 'object',
      additionalProperties: false,
      properties: APPLICATION_SETTINGS_SCHEMAS,
    },
  },
};

/** The JSON Schema of a profile (`POST /profiles` bodies, `GET /schema/profiles`): its id and its settings. */
export const PROFILE_SCHEMA: JsonSchema = {
  ...PROFILE_SETTINGS_SCHEMA,
  required: ['id'],
  properties: {
    id: { type: 'string', pattern: PROFILE_ID_PATTERN, description: '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit' },
    ...(PROFILE_SETTINGS_SCHEMA['properties'] as Record<string, JsonSchema>),
  },
};

/** A setting's built-in default: its former environment variable when the deployment sets it, else the documented default. */
const envDefault = (key: NumericSetting, env: NodeJS.ProcessEnv): number => {
  const bounds = SETTING_BOUNDS[key];
  const raw = bounds.env === undefined ? undefined : env[bounds.env];
  if (raw === undefined || raw === '') return bounds.default;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < bounds.minimum || value > bounds.maximum) {
    throw new Error(`configuration error: ${bounds.env} must be an integer from ${bounds.minimum} to ${bounds.maximum}, got ${raw}`);
  }
  return value;
};

const isLevel = isLogLevel;

/** The built-in log level: the deployment's `LOG_LEVEL` when it names a level, else `info`. */
const envLogLevel = (env: NodeJS.ProcessEnv): ProfileLogLevel => {
  const level = env['LOG_LEVEL']?.toLowerCase();
  return isLevel(level) ? level : 'info';
};

/**
 * The built-in defaults, read once when the module loads (a variable out of bounds fails the
 * function's first invocation, as every configuration error does).
 */
export const builtInDefaults = (env: NodeJS.ProcessEnv = process.env): Readonly<Record<NumericSetting, number>> & { readonly logLevel: ProfileLogLevel } => ({
  ...(Object.fromEntries((Object.keys(SETTING_BOUNDS) as NumericSetting[]).map((key) => [key, envDefault(key, env)])) as Record<NumericSetting, number>),
  logLevel: envLogLevel(env),
});
const BUILT_IN = builtInDefaults();

/** A numeric setting as given, or its default when absent or (in a damaged stored item) out of bounds. */
const numberOr = (value: unknown, key: NumericSetting): number => {
  const { minimum, maximum } = SETTING_BOUNDS[key];
  return typeof value === 'number' && Number.isInteger(value) && value >= minimum && value <= maximum ? value : BUILT_IN[key];
};

const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** One application's settings with every default filled in. */
export const applicationSettings = <A extends ApplicationName>(name: A, input: unknown): ApplicationSettings[A] => {
  const given = record(input);
  const level = isLevel(given['logLevel']) ? { logLevel: given['logLevel'] } : {};
  const settings =
    name === 'orch_manager'
      ? {
          ...level,
          orchestratorTimeoutMs: numberOr(given['orchestratorTimeoutMs'], 'orchestratorTimeoutMs'),
          adapterCacheSeconds: numberOr(given['adapterCacheSeconds'], 'adapterCacheSeconds'),
          maxConcurrentCallsPerAdapter: numberOr(given['maxConcurrentCallsPerAdapter'], 'maxConcurrentCallsPerAdapter'),
        }
      : {
          ...level,
          complianceConcurrency: numberOr(given['complianceConcurrency'], 'complianceConcurrency'),
          reportRetentionDays: numberOr(given['reportRetentionDays'], 'reportRetentionDays'),
          configRetentionDays: numberOr(given['configRetentionDays'], 'configRetentionDays'),
          historyRetentionDays: numberOr(given['historyRetentionDays'], 'historyRetentionDays'),
        };
  return settings as ApplicationSettings[A];
};

/**
 * Profile settings with every default filled in. Input that passed {@link PROFILE_SETTINGS_SCHEMA}
 * comes out as given; a damaged stored item comes out with defaults where it is damaged.
 */
export const profileSettings = (input: unknown): ProfileSettings => {
  const given = record(input);
  const apps = record(given['applications']);
  return {
    ...(typeof given['description'] === 'string' ? { description: given['description'] } : {}),
    logLevel: isLevel(given['logLevel']) ? given['logLevel'] : BUILT_IN.logLevel,
    applications: {
      orch_manager: applicationSettings('orch_manager', apps['orch_manager']),
      configuration_manager: applicationSettings('configuration_manager', apps['configuration_manager']),
    },
  };
};

/** The `default` profile as it is before anyone changes it. */
export const builtInProfile = (): ProfileSettings => ({ description: 'Created with the service', ...profileSettings({}) });
