import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applicationDependencies, liveRoutes } from '../../functions/api/routes.js';
import { applicationNeeds, indexedRoutes } from '../../functions/generated/route-index.js';
import { APPLICATIONS } from '../../functions/platform/applications.js';
import { indexedRoute, routeIndexSource } from '../../infra/build/route-index.js';
import { PROJECT_ROOT } from '../../infra/paths.js';

describe('the generated route index', () => {
  it('is up to date with the route table (run npm run generate)', () => {
    expect(readFileSync(path.join(PROJECT_ROOT, 'functions/generated/route-index.ts'), 'utf8')).toBe(routeIndexSource());
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
