/** The adapter and device a configuration-history route names in its path, decoded and checked. */
import { pathNameProblem, nameFromPath } from '../platform/names.js';
import { deviceFromPath } from '../trees/config-checks.js';

/** `{adapterId}` and `{device}` as API Gateway passes them (percent-encoded): decoded, or a 400 naming the one that is no name. */
export const devicePath = (parameters: unknown): { readonly adapterId: string; readonly device: string } => {
  const { adapterId, device } = parameters as { adapterId: string; device: string };
  return { adapterId: nameFromPath(adapterId, 'adapterId', pathNameProblem), device: deviceFromPath(device) };
};
