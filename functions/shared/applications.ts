/**
 * The service's own applications: `orch_manager` (the relay) and `configuration_manager`
 * (trees, compliance). Their names are the `{name}` of the `/applications/{name}/…` routes.
 */
export const APPLICATIONS = ['orch_manager', 'configuration_manager'] as const;
export type ApplicationName = (typeof APPLICATIONS)[number];

export const isApplicationName = (name: string): name is ApplicationName => (APPLICATIONS as readonly string[]).includes(name);
