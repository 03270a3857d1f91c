import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { deprecatedItems, removedRouteName, removedRoutes, successorLinks } from '../../functions/api/removed.js';
import { liveRoute, liveRoutes } from '../../functions/api/routes.js';
import { resourcePath } from '../../functions/platform/route.js';
import { specRows } from '../support/spec-table.js';

const specPath = (p: string) => p.replaceAll(/\{(\w+)\}/g, ':$1');

describe('route table', () => {
  const rows = specRows();

  it('holds all 36 rows of spec 9.1, exactly as the spec writes them', () => {
    expect(rows).toHaveLength(36);
    expect(deprecatedItems).toHaveLength(36);
    const table = deprecatedItems.map((r) => ({
      method: r.method,
      path: specPath(r.path),
      description: r.description,
      deprecatedIn: r.deprecatedIn,
      removedIn: r.removedIn,
      replacement: [...r.replacement],
    }));
    expect(table).toEqual(rows);
  });

  it('answers 410 for every row except the two that name themselves as replacement', () => {
    expect(removedRoutes).toHaveLength(34);
    const kept = deprecatedItems.filter((r) => !removedRoutes.includes(r)).map(removedRouteName);
    expect(kept).toEqual(['GET /health/system', 'GET /health/server']);
    for (const name of kept) {
      const [method, path] = name.split(' ');
      expect(liveRoutes.some((r) => r.method === method && r.path === path)).toBe(true);
    }
  });

  it('removes /isAlive for every method and POST /modules/load without replacement', () => {
    const isAlive = removedRoutes.find((r) => r.path === '/isAlive');
    expect(isAlive?.method).toBe('ANY');
    expect(isAlive?.removedIn).toBe('2021.1');
    expect(removedRoutes.filter((r) => r.removedIn === '2021.1')).toHaveLength(1);
    expect(removedRoutes.find((r) => r.path === '/modules/load')?.replacement).toEqual([]);
  });

  it('gives the spec roles to the live routes of the spec', () => {
    expect(liveRoute('relayRestAction')).toMatchObject({ method: 'POST', path: '/orch_manager/restAction/{adapterId}', roles: ['admin'] });
    expect(liveRoute('getTree')).toMatchObject({ method: 'GET', path: '/configuration_manager/configs/{treeId}', roles: ['admin', 'apiread'] });
  });

  it('has unique operation ids and no method and path served twice', () => {
    expect(new Set(liveRoutes.map((r) => r.operationId)).size).toBe(liveRoutes.length);
    const keys = [...liveRoutes.map((r) => `${r.method} ${r.path}`), ...removedRoutes.map((r) => `${r.method} ${resourcePath(r.path)}`)];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("links every replacement path, its parameters filled by the removed route's own, in order", () => {
    const link = (method: string, path: string) => successorLinks(removedRoutes.find((r) => (r.method === method || r.method === 'ANY') && r.path === path)!);
    expect(link('GET', '/isAlive')).toEqual(['/status']);
    expect(link('GET', '/config/services')).toEqual(['/adapters', '/applications']);
    expect(link('GET', '/providers/{id}')).toEqual(['/adapters/{id}']);
    expect(link('GET', '/config/property/id/{id}')).toEqual(['/profiles/{id}']);
    expect(link('GET', '/health/module/{module}')).toEqual(['/health/adapters/{module}', '/health/applications/{module}']);
    expect(link('GET', '/modules/stop/{module}')).toEqual(['/adapters/{module}/stop', '/applications/{module}/stop']);
    // No parameter to fill the replacement's with: no concrete path, no link.
    expect(link('GET', '/config/services/schema')).toEqual([]);
    expect(link('POST', '/modules/load')).toEqual([]);
  });

  it('throws on an unknown operation id', () => {
    expect(() => liveRoute('nope')).toThrow(/unknown operation/);
  });
});

describe('applications in the route table', () => {
  it('puts every route under an application prefix in that application, and no other route in any', () => {
    for (const route of liveRoutes) {
      const prefix = route.path.split('/')[1];
      if (prefix === 'orch_manager' || prefix === 'configuration_manager') expect(route.application, route.operationId).toBe(prefix);
      else expect(route.application, route.operationId).toBeUndefined();
    }
    expect(liveRoute('relayRestAction').application).toBe('orch_manager');
    expect(liveRoute('startComplianceBatch').application).toBe('configuration_manager');
  });

  it('gives the profiles table to every function that uses DynamoDB or serves an application, writable only by the profile and application writes', () => {
    for (const route of liveRoutes) {
      const tables = route.needs.tables ?? {};
      const usesDynamo = Object.keys(tables).some((k) => k !== 'profiles');
      if (usesDynamo || route.application) expect(tables.profiles, route.operationId).toBeDefined();
      const writes = tables.profiles === 'write';
      const isRuntimeWrite = route.method !== 'GET' && (route.path.startsWith('/profiles') || route.path.startsWith('/applications/'));
      expect(writes, route.operationId).toBe(isRuntimeWrite);
    }
    for (const id of ['getStatus', 'getServerHealth', 'getProfileSchema', 'getApplicationSchema']) expect(liveRoute(id).needs, id).toEqual({});
    for (const id of ['getConsole', 'getConsoleAsset', 'getConsoleConfig']) expect(liveRoute(id).needs, id).toEqual({ console: true });
  });

  it("lets the application health routes read every table of every application's routes", () => {
    const health = liveRoute('getApplicationHealth').needs.tables ?? {};
    for (const route of liveRoutes.filter((r) => r.application)) {
      for (const key of Object.keys(route.needs.tables ?? {})) expect(health[key as keyof typeof health], `${route.operationId} ${key}`).toBe('read');
    }
    expect(liveRoute('getApplicationsHealth').needs).toEqual(liveRoute('getApplicationHealth').needs);
  });
});

describe('handlers and the active profile', () => {
  /** Every module of `functions/` a handler module reaches through its relative imports. */
  const reached = (handler: string): Set<string> => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      // The generated validators are plain JavaScript and import nothing of the service.
      if (seen.has(file) || file.includes(`${path.sep}generated${path.sep}`)) return;
      seen.add(file);
      // Type-only imports are erased: they bring nothing into the bundle.
      const imports = readFileSync(file, 'utf8').matchAll(/^(?:import|export)(?!\s+type\b)[^;]*?from '(\.{1,2}\/[^']+)\.js'/gm);
      for (const [, spec] of imports) visit(path.resolve(path.dirname(file), `${spec}.ts`));
    };
    visit(path.join(PROJECT_ROOT, 'functions', `${handler}.ts`));
    return new Set([...seen].map((f) => path.relative(path.join(PROJECT_ROOT, 'functions'), f)));
  };

  it('applies the profile (log level, stopped applications) in every handler but those that read no table and serve no application', () => {
    const exempt: string[] = [];
    for (const route of liveRoutes) {
      const modules = reached(route.handler);
      if (modules.has('runtime/http.ts')) continue;
      exempt.push(route.operationId);
      // Without the profile, nothing of it in the bundle either.
      expect(modules.has('runtime/settings.ts'), route.operationId).toBe(false);
      expect(route.application, route.operationId).toBeUndefined();
      expect(Object.keys(route.needs.tables ?? {}), route.operationId).toEqual([]);
    }
    expect(exempt.sort()).toEqual([
      'getApplicationSchema',
      'getConsole',
      'getConsoleAsset',
      'getConsoleConfig',
      'getProfileSchema',
      'getServerHealth',
      'getStatus',
    ]);
  });
});
