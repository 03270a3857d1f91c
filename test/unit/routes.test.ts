import { describe, expect, it } from 'vitest';
import {
  deprecatedItems,
  liveRoute,
  liveRoutes,
  removedRouteName,
  removedRoutes,
  resourcePath,
  successorLinks,
} from '../../functions/shared/routes.js';
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
    const keys = [
      ...liveRoutes.map((r) => `${r.method} ${r.path}`),
      ...removedRoutes.map((r) => `${r.method} ${resourcePath(r.path)}`),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('links every replacement path, its parameters filled by the removed route\'s own, in order', () => {
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
