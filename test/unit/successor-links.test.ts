/**
 * The 410 answers of removed routes as the local gateway renders their Mock integrations: for
 * any path parameter value, a `Link` target is a well-formed path under the request's prefix whose
 * filled segment is the value as sent, and a value that cannot be carried safely (dot
 * segments, encoded separators, anything of the `Link` syntax or outside RFC 3986 segment
 * characters) leaves its link out while the problem body stays the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { removedRoutes, successorLinks } from '../../functions/api/removed.js';
import type { RemovedRoute } from '../../functions/platform/route.js';
import { unsupportedMapping } from '../../tools/local/mapping.js';
import { runMock } from '../../tools/local/mock.js';
import type { MockIntegration } from '../../tools/local/template.js';
import { goneProblem, LINK_SEGMENT, successorLinkTemplate } from '../../infra/removed-routes.js';

/** The Mock integration `addRemovedRoute` gives the route (the infra test pins the synthesized one to it). */
const mockOf = (route: RemovedRoute): MockIntegration => ({
  type: 'MOCK',
  passthroughBehavior: 'NEVER',
  requestTemplates: { 'application/json': '{"statusCode": 410}' },
  integrationResponses: [
    {
      statusCode: '410',
      responseParameters: { 'method.response.header.Content-Type': "'application/problem+json'" },
      responseTemplates: { 'application/json': `${successorLinkTemplate(route) ?? ''}${JSON.stringify(goneProblem(route))}` },
    },
  ],
  timeoutMs: 29_000,
});

/**
 * The answer to a request of the route with these parameters, its path as API Gateway gives it
 * in `$context.path`: after the stage on the execute-api URL (`/v1`), after the base path on a
 * custom domain (`prefix`, `''` for an empty base path), with a trailing slash when asked.
 */
const answer = (
  route: RemovedRoute,
  pathParameters: Record<string, string>,
  { prefix = '/v1', domainName = 'abc123.execute-api.eu-west-1.amazonaws.com', slash = '' } = {},
) => {
  const path = `${prefix}${route.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParameters[name]!)}${slash}`;
  const r = runMock(mockOf(route), {
    context: { stage: 'v1', requestId: 'req-1', path, domainName },
    stageVariables: null,
    headers: {},
    query: {},
    pathParameters,
    body: '',
  });
  if (r.kind !== 'response') throw new Error(`no response: ${JSON.stringify(r)}`);
  return r;
};

const SEGMENT_CHARS = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!*+=:@()');

/** Written apart from {@link LINK_SEGMENT}: whether a value can stand in a Link target as it is. */
const carriable = (value: string): boolean => {
  let decoded = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '%') {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return false;
      decoded += String.fromCharCode(parseInt(hex, 16));
      i += 2;
    } else if (SEGMENT_CHARS.has(c)) decoded += c;
    else return false;
  }
  return decoded !== '' && decoded !== '.' && decoded !== '..' && !decoded.includes('/') && !decoded.includes('\\');
};

const PIECES = [
  '..',
  '.',
  '%2e',
  '%2E',
  '%2F',
  '%2f',
  '%5C',
  '/',
  '\\',
  '"',
  "'",
  '<',
  '>',
  ',',
  ';',
  ' ',
  '\t',
  '\r\n',
  '\u0000',
  '\u007f',
  '%',
  '%4',
  '%41',
  '%25',
  'a',
  'Z',
  '9',
  '-',
  '_',
  '~',
  '(',
  ')',
  '@',
  ':',
  '=',
  '$',
  '#',
  '{',
  '}',
  'é',
  '\u2028',
  '\u200b',
];
const value = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,20}$/),
);

const withParams = removedRoutes.filter((r) => /\{\w+\}/.test(r.path) && successorLinks(r).length);
const LINK = /^<([^<>"\s,;]*)>; rel="successor-version"$/;

describe('successor links of removed routes', () => {
  it('has routes with path parameters to test, and every template is one the local stack renders', () => {
    expect(withParams.length).toBeGreaterThan(5);
    for (const route of removedRoutes)
      expect(unsupportedMapping(mockOf(route).integrationResponses[0]!.responseTemplates['application/json']!), route.path).toBeUndefined();
  });

  it.each(withParams.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: links a value only when it can be carried safely, the body unchanged',
    (_, route) => {
      const param = /\{(\w+)\}/.exec(route.path)![1]!;
      const body = JSON.stringify(goneProblem(route));
      fc.assert(
        fc.property(value, (v) => {
          const r = answer(route, { [param]: v });
          expect(r.statusCode).toBe(410);
          expect(r.body).toBe(body);
          const expected = successorLinks(route)
            .filter((p) => !p.includes(`{${param}}`) || carriable(v))
            .map((p) => `</v1${p.replace(`{${param}}`, v)}>; rel="successor-version"`);
          const link = r.headers['Link'];
          if (!expected.length) {
            expect(link).toBeUndefined();
            return;
          }
          expect(link).toBe(expected.join(', '));
          for (const one of link!.split(', ')) {
            const target = LINK.exec(one)?.[1];
            expect(target, one).toBeDefined();
            for (const segment of target!.split('/').slice(1)) expect(carriable(segment), segment).toBe(true);
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  it('refuses dot segments and Link syntax, and keeps ordinary names', () => {
    const pattern = new RegExp(`^(?:${LINK_SEGMENT})$`);
    for (const bad of ['.', '..', '%2e', '%2E%2e', '.%2E', 'a"b', 'a b', 'a,b', 'a;b', '<a>', 'a%2Fb', 'a%5cb', '%', '%4g', '', 'é'])
      expect(pattern.test(bad), bad).toBe(false);
    for (const good of ['42', 'lab-nso', 'a.b', '...', 'a%20b', 'x_y~z', 'a%C3%A9']) expect(pattern.test(good), good).toBe(true);
  });

  it('links under the prefix the caller used: the stage, a custom domain base path, or none', () => {
    const route = removedRoutes.find((r) => r.path === '/config/property/id/{id}')!;
    const custom = { domainName: 'netconfig.bank.example' };
    expect(answer(route, { id: '42' }).headers['Link']).toBe('</v1/profiles/42>; rel="successor-version"');
    expect(answer(route, { id: '42' }, { ...custom, prefix: '/netconfig' }).headers['Link']).toBe('</netconfig/profiles/42>; rel="successor-version"');
    expect(answer(route, { id: '42' }, { ...custom, prefix: '/network/config' }).headers['Link']).toBe(
      '</network/config/profiles/42>; rel="successor-version"',
    );
    expect(answer(route, { id: '42' }, { ...custom, prefix: '' }).headers['Link']).toBe('</profiles/42>; rel="successor-version"');
    expect(answer(route, { id: '42' }, { ...custom, prefix: '/netconfig', slash: '/' }).headers['Link']).toBe(
      '</netconfig/profiles/42>; rel="successor-version"',
    );
    const plain = removedRoutes.find((r) => r.method === 'GET' && r.path === '/providers')!;
    expect(answer(plain, {}, { ...custom, prefix: '/netconfig' }).headers['Link']).toBe('</netconfig/adapters>; rel="successor-version"');
  });

  it('leaves the header out when every link needs a value that cannot be carried', () => {
    const route = removedRoutes.find((r) => r.path === '/config/property/id/{id}')!;
    expect(answer(route, { id: '..' }).headers['Link']).toBeUndefined();
    expect(answer(route, { id: '42' }).headers['Link']).toBe('</v1/profiles/42>; rel="successor-version"');
  });
});
