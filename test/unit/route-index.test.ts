import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applicationDependencies, liveRoutes } from '../../functions/api/routes.js';
import { applicationNeeds, indexedRoutes } from '../../functions/generated/route-index.js';
import { APPLICATIONS } from '../../functions/platform/applications.js';
import { indexedRoute, ROUTE_INDEX_FILE, routeIndexSource, staleRouteIndex } from '../../infra/build/route-index.js';

describe('the generated route index', () => {
  it('is refused by a synth when stale or missing, so the authorizer never enforces other roles than the routes declare', () => {
    expect(staleRouteIndex()).toBeUndefined();
    const dir = mkdtempSync(path.join(tmpdir(), 'route-index-'));
    try {
      const file = path.join(dir, 'route-index.ts');
      // One role of one route changed by hand, as a route edited without npm run generate would leave it.
      writeFileSync(file, routeIndexSource().replace('"roles":["admin","apiread"]', '"roles":["admin"]'));
      expect(staleRouteIndex(file)).toBe(`${file} does not match the route table`);
      expect(staleRouteIndex(path.join(dir, 'absent.ts'))).toBe(`${path.join(dir, 'absent.ts')} is missing`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(ROUTE_INDEX_FILE).toBe('functions/generated/route-index.ts');
  });

  it('holds every live route, in order, with what runtime code reads of it', () => {
    expect(indexedRoutes.map((r) => r.operationId)).toEqual(liveRoutes.map((r) => r.operationId));
    indexedRoutes.forEach((entry, i) => {
      const route = liveRoutes[i]!;
      expect(entry).toEqual(indexedRoute(route));
      expect({ method: entry.method, path: entry.path, roles: entry.roles, application: entry.application, needs: entry.needs }).toEqual({
        method: route.method,
        path: route.path,
        roles: route.roles,
        application: route.application,
        needs: route.needs,
      });
    });
  });

  it("holds each application's dependencies as the route table derives them", () => {
    for (const name of APPLICATIONS) expect(applicationNeeds[name], name).toEqual(applicationDependencies(name));
    expect(Object.keys(applicationNeeds)).toEqual([...APPLICATIONS]);
  });

  it('carries no schema and no documentation', () => {
    for (const entry of indexedRoutes) expect(Object.keys(entry).sort()).toEqual(expect.arrayContaining(['method', 'needs', 'operationId', 'path', 'roles']));
    for (const entry of indexedRoutes)
      for (const key of Object.keys(entry)) expect(['operationId', 'method', 'path', 'roles', 'application', 'needs']).toContain(key);
  });
});
