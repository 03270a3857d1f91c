/**
 * The service's own applications, and which routes belong to which: a route belongs to the
 * application its path starts with (`/orch_manager/…` → `orch_manager`). One rule, used by the
 * route table (listing, health dependencies) and by the gate that refuses the routes of a
 * stopped application (`functions/runtime/http.ts`), which sees the same path as the event's
 * `resource`.
 */
export const APPLICATIONS = ['orch_manager', 'configuration_manager'] as const;
export type ApplicationName = (typeof APPLICATIONS)[number];

export const isApplicationName = (name: unknown): name is ApplicationName => typeof name === 'string' && (APPLICATIONS as readonly string[]).includes(name);

/** The application a route path (`/orch_manager/restAction/{adapterId}`) belongs to, if any. */
export const applicationOf = (path: string | null | undefined): ApplicationName | undefined => {
  const first = path?.split('/')[1];
  return isApplicationName(first) ? first : undefined;
};

/** What each application is, as `GET /applications` describes it. */
export const APPLICATION_DESCRIPTIONS: Readonly<Record<ApplicationName, string>> = {
  orch_manager: 'The relay: REST actions to orchestrators through named adapters',
  configuration_manager: 'Golden-configuration trees, their versions, exports and imports, and compliance batches',
};
