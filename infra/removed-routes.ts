/**
 * The removed routes of spec 9.1 as API Gateway Mock integrations: API Gateway itself answers
 * 410 with a problem body, the replacement list and successor links. No Lambda and no
 * authorizer run for them.
 */
import { AuthorizationType, MockIntegration, PassthroughBehavior, type IResource } from 'aws-cdk-lib/aws-apigateway';
import { problemType, PROBLEM_CONTENT_TYPE } from '../functions/platform/problem.js';
import { removedRouteName, successorLinks } from '../functions/api/removed.js';
import { resourcePath, type RemovedRoute } from '../functions/platform/route.js';

/** Media types whose requests the 410 Mock integrations read; API Gateway uses `application/json` when none is sent. */
export const MOCK_MEDIA_TYPES = [
  'application/json',
  'application/problem+json',
  'application/merge-patch+json',
  'application/yang-data+json',
  'application/yang-data+xml',
  'application/vnd.yang.data+json',
  'application/vnd.yang.data+xml',
  'application/vnd.yang.collection+json',
  'application/vnd.yang.collection+xml',
  'application/xml',
  'text/xml',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
] as const;

/** The 410 problem body of one removed route. */
export const goneProblem = (route: RemovedRoute) => {
  const name = removedRouteName(route);
  const instead = route.replacement.length ? `Use ${route.replacement.join(' or ')} instead.` : 'It has no replacement.';
  return {
    type: problemType('route-removed'),
    title: 'Gone',
    status: 410,
    detail: `${name} was deprecated in ${route.deprecatedIn} and removed in ${route.removedIn}. ${instead}`,
    route: name,
    deprecatedIn: route.deprecatedIn,
    removedIn: route.removedIn,
    replacement: [...route.replacement],
  };
};

/**
 * A path parameter value a `Link` target may carry as the request gave it (API Gateway does not
 * decode it): RFC 3986 segment characters (unreserved, `!*+=:@()`) and percent escapes; not a
 * dot segment (`.`, `..`, percent-encoded or not), no encoded `/` or backslash, and nothing of the
 * `Link` syntax (`"`, `<`, `>`, `,`, `;`, spaces, control characters). One pattern for Java
 * (`String.matches` in the mapping template) and JavaScript alike.
 */
export const LINK_SEGMENT = '(?!(?:[.]|%2[eE]){1,2}$)(?!.*%(?:2[fF]|5[cC]))(?:[A-Za-z0-9._~!*+=:@()-]|%[0-9A-Fa-f]{2})+';

/**
 * The mapping-template lines that set a removed route's `Link` header, or undefined when no
 * replacement has a concrete path. Each target is concrete and carries the prefix the caller
 * used: `$context.path` (the path as requested) without the route's own segments, so the stage
 * on the execute-api URL (`GET /v1/config/property/id/42` links `</v1/profiles/42>`) and the
 * base path on a custom domain (`GET /netconfig/config/property/id/42` links
 * `</netconfig/profiles/42>`; none with an empty base path); path parameters from the request
 * (`$input.params`). A target whose parameters are not
 * all {@link LINK_SEGMENT}s is left out (the problem body still names the replacement), and no
 * header is set when none is left. API Gateway sets the header from
 * `$context.responseOverride` (a response parameter mapping cannot concatenate).
 */
export const successorLinkTemplate = (route: RemovedRoute): string | undefined => {
  const links = successorLinks(route);
  if (!links.length) return undefined;
  const lines = [`#set($q = '"')`, `#set($link = '')`, `#set($sep = '')`, `#set($base = ${requestPrefix(route.path)})`];
  for (const path of links) {
    const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const target = path.replace(/\{(\w+)\}/g, (_, name: string) => `$input.params('${name}')`);
    const add = `#set($link = "$link$sep<$base${target}>; rel=\${q}successor-version\${q}")#set($sep = ', ')`;
    const safe = params.map((name) => `$input.params('${name}').matches('${LINK_SEGMENT}')`).join(' && ');
    lines.push(safe ? `#if(${safe})${add}#end` : add);
  }
  lines.push(`#if($link != '')#set($context.responseOverride.header.Link = "$link")#end`);
  return `${lines.join('\n')}\n`;
};

/**
 * The VTL expression of the prefix before a route's path in the request: `$context.path` less as
 * many trailing segments as the route has (and a trailing slash, which API Gateway serves as the
 * route). Path parameters are single segments, and one holding an encoded `/` gets no link
 * ({@link LINK_SEGMENT}), so the count holds for every linked request.
 */
export const requestPrefix = (routePath: string): string => {
  const segments = routePath.split('/').filter(Boolean).length;
  return `$context.path.replaceAll('(?:/[^/]+){${segments}}/?$', '')`;
};

/**
 * Adds one Mock method answering 410 for a removed route under `root`.
 * The body is static JSON, so it is safe inside a VTL template (no `$` or `#`); the `Link`
 * lines before it are directives, each ending its line, and print nothing.
 */
export const addRemovedRoute = (root: IResource, route: RemovedRoute): void => {
  const resource = root.resourceForPath(resourcePath(route.path));
  const link = successorLinkTemplate(route);
  const headers: Record<string, string> = { 'method.response.header.Content-Type': `'${PROBLEM_CONTENT_TYPE}'` };
  const integration = new MockIntegration({
    // The Mock reads its status from the request template chosen by Content-Type. Every media
    // type a client plausibly sends gets the template, and the one integration response (no
    // selection pattern) answers 410 to all of them. Any other type is refused with the 415
    // problem: passed through, the caller's body would leave the Mock without a status (500).
    passthroughBehavior: PassthroughBehavior.NEVER,
    requestTemplates: Object.fromEntries(MOCK_MEDIA_TYPES.map((type) => [type, '{"statusCode": 410}'])),
    integrationResponses: [
      {
        statusCode: '410',
        responseParameters: headers,
        responseTemplates: { 'application/json': `${link ?? ''}${JSON.stringify(goneProblem(route))}` },
      },
    ],
  });
  resource.addMethod(route.method, integration, {
    authorizationType: AuthorizationType.NONE,
    methodResponses: [
      {
        statusCode: '410',
        responseParameters: { ...Object.fromEntries(Object.keys(headers).map((h) => [h, true])), ...(link ? { 'method.response.header.Link': false } : {}) },
      },
    ],
  });
};
