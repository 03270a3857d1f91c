import { describe, expect, it } from 'vitest';
import { Router, segments } from '../../tools/local/router.js';
import type { MethodSpec } from '../../tools/local/template.js';

const method = (httpMethod: string, resourcePath: string): MethodSpec => ({
  logicalId: `${httpMethod}${resourcePath}`,
  httpMethod,
  resourcePath,
  resourceId: 'abc123',
  apiKeyRequired: false,
  integration: { type: 'AWS_PROXY', functionId: 'Fn', timeoutMs: 29_000 },
});

const router = new Router([
  method('GET', '/'),
  method('GET', '/adapters'),
  method('GET', '/adapters/{name}'),
  method('PUT', '/adapters/{name}'),
  method('GET', '/adapters/{name}/health'),
  method('GET', '/adapters/special'),
  method('ANY', '/isAlive'),
  method('GET', '/a/b/c'),
  method('GET', '/a/{x}/d'),
  method('ANY', '/files/{proxy+}'),
  method('GET', '/files/readme'),
]);

describe('local router', () => {
  it('matches literal paths and returns no parameters', () => {
    expect(router.match('GET', '/adapters')).toMatchObject({ resourcePath: '/adapters', pathParameters: {} });
    expect(router.match('GET', '/')).toMatchObject({ resourcePath: '/' });
  });

  it('extracts path parameters without decoding them, as API Gateway does', () => {
    expect(router.match('GET', '/adapters/lab%20nso')).toMatchObject({ resourcePath: '/adapters/{name}', pathParameters: { name: 'lab%20nso' } });
    expect(router.match('GET', '/adapters/a%2Fb/health')?.pathParameters).toEqual({ name: 'a%2Fb' });
  });

  it('prefers a literal segment over a parameter, and backtracks when the literal branch has no match', () => {
    expect(router.match('GET', '/adapters/special')?.resourcePath).toBe('/adapters/special');
    expect(router.match('GET', '/a/b/d')).toMatchObject({ resourcePath: '/a/{x}/d', pathParameters: { x: 'b' } });
    expect(router.match('GET', '/a/b/c')?.resourcePath).toBe('/a/b/c');
  });

  it('matches the method exactly, else ANY, else nothing', () => {
    expect(router.match('PUT', '/adapters/x')?.method.httpMethod).toBe('PUT');
    expect(router.match('DELETE', '/adapters/x')).toBeUndefined();
    expect(router.match('PATCH', '/isAlive')?.method.httpMethod).toBe('ANY');
    expect(router.match('get', '/adapters')?.method.httpMethod).toBe('GET');
  });

  it('ignores one trailing slash but not empty segments inside the path', () => {
    expect(router.match('GET', '/adapters/')?.resourcePath).toBe('/adapters');
    expect(router.match('GET', '/adapters//x')).toBeUndefined();
  });

  it('lets a greedy parameter take the rest of the path, after literals', () => {
    expect(router.match('DELETE', '/files/a/b/c')).toMatchObject({ resourcePath: '/files/{proxy+}', pathParameters: { proxy: 'a/b/c' } });
    expect(router.match('GET', '/files/readme')?.resourcePath).toBe('/files/readme');
    expect(router.match('GET', '/files')).toBeUndefined();
  });

  it('does not match a resource that has no methods (an intermediate path)', () => {
    expect(router.match('GET', '/a')).toBeUndefined();
    expect(router.match('GET', '/unknown')).toBeUndefined();
  });

  it('splits paths into segments', () => {
    expect(segments('/')).toEqual([]);
    expect(segments('/a/b/')).toEqual(['a', 'b']);
    expect(segments('/a//b')).toBeUndefined();
  });

  it('refuses two different parameter names at one level', () => {
    expect(() => new Router([method('GET', '/x/{a}'), method('GET', '/x/{b}/y')])).toThrow(/two parameters/);
  });
});
