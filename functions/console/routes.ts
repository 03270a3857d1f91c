/**
 * The web console's routes: public (a page load carries no bearer token; the console signs in
 * itself and sends the ID token on its API calls). docs/console.md.
 */
import { EMPTY_BODY, type LiveRoute } from '../platform/route.js';

/** A file name the console's build can make: `<name>-<hash>.<ext>`; anything else is refused before a lookup. */
export const CONSOLE_ASSET_NAME = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*\\.(?:js|css)$' } as const;

/**
 * What an identity provider appends to the console's address when it sends the browser back
 * (OAuth 2.0 and OIDC: the code and state, or an error; RFC 9207's `iss`, and `session_state` of
 * OIDC session management). The page ignores them on the server; the script reads them.
 */
const CALLBACK_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(
    ['code', 'state', 'error', 'error_description', 'error_uri', 'iss', 'session_state'].map((k) => [k, { type: 'string', maxLength: 2048 }]),
  ),
} as const;

const consoleRoute = (
  route: Pick<LiveRoute, 'path' | 'operationId' | 'summary' | 'handler' | 'responses'> & { readonly request?: LiveRoute['request'] },
): LiveRoute => ({
  method: 'GET',
  tag: 'console',
  roles: 'public',
  request: { body: EMPTY_BODY },
  needs: { console: true },
  ...route,
});

export const consoleRoutes: readonly LiveRoute[] = [
  consoleRoute({
    path: '/console',
    operationId: 'getConsole',
    summary: 'The web console (an HTML page; sign-in happens in the browser)',
    handler: 'console/handlers/page',
    request: { queryStringParameters: CALLBACK_QUERY, body: EMPTY_BODY },
    responses: { 200: 'The console’s page (`text/html`, `Cache-Control: no-cache`), its asset URLs absolute under the request’s base path' },
  }),
  consoleRoute({
    path: '/console/assets/{file}',
    operationId: 'getConsoleAsset',
    summary: 'A content-hashed script or style sheet of the web console',
    handler: 'console/handlers/asset',
    request: { pathParameters: { type: 'object', required: ['file'], properties: { file: CONSOLE_ASSET_NAME } }, body: EMPTY_BODY },
    responses: {
      200: 'The asset (`text/javascript` or `text/css`), `Cache-Control: public, max-age=31536000, immutable`: its name changes with its content',
      400: 'The name is not one the console’s build makes',
      404: 'No asset of the console has this name',
    },
  }),
  consoleRoute({
    path: '/console/config.json',
    operationId: 'getConsoleConfig',
    summary: 'How the web console signs in: the identity provider’s endpoints, the console’s client id, scopes and roles claim',
    handler: 'console/handlers/config',
    responses: { 200: '`{ authorizationEndpoint, tokenEndpoint, clientId, scopes, rolesClaim, endSessionEndpoint? }` (`Cache-Control: no-cache`)' },
  }),
];
