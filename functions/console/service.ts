/**
 * Serves the built console (`console/build.ts`) from the function's bundle: the page with its
 * asset URLs made absolute for the request's base path, the hashed assets by name (only names
 * the build's manifest lists: nothing else on disk can be reached), and the sign-in settings.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { InternalError, NotFound } from '../platform/problem.js';
import { basePathOf, CONSOLE_ENV, escapeHtml, IMMUTABLE, NO_CACHE, type ConsoleConfig } from './model.js';

/** The build's `manifest.json`, as far as serving reads it. */
interface Manifest {
  readonly assets: Readonly<Record<string, { readonly file: string; readonly contentType: string }>>;
}

/** What the console's handlers serve. */
export interface ConsoleFiles {
  /** `GET /console`: the page, its asset URLs under the base path of `requestPath`. */
  page(requestPath: string | undefined): APIGatewayProxyResult;
  /** `GET /console/assets/{file}`: a hashed asset; {@link NotFound} for a name the build did not make. */
  asset(file: string): APIGatewayProxyResult;
}

/** The files of the built console in `dir`, read on first use and kept (they never change in a deployed function). */
export const consoleFiles = (dir: string): ConsoleFiles => {
  let template: string | undefined;
  let manifest: Manifest | undefined;
  const cache = new Map<string, string>();
  const read = (name: string): string => {
    try {
      return readFileSync(path.join(dir, name), 'utf8');
    } catch (error) {
      throw new InternalError('a file of the built console is missing from the bundle', { file: name, error });
    }
  };
  const assets = () => (manifest ??= JSON.parse(read('manifest.json')) as Manifest).assets;
  return {
    page: (requestPath) => {
      template ??= read('index.html');
      const base = escapeHtml(basePathOf(requestPath));
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': NO_CACHE },
        // A function: a string replacement would expand `$&`, `$'` and the like.
        body: template.replaceAll('%BASE%', () => base),
      };
    },
    asset: (file) => {
      const list = assets();
      const entry = Object.hasOwn(list, file) ? list[file] : undefined;
      if (!entry) throw new NotFound(`The console has no asset named "${file}".`);
      let body = cache.get(entry.file);
      if (body === undefined) cache.set(entry.file, (body = read(`assets/${entry.file}`)));
      return { statusCode: 200, headers: { 'Content-Type': entry.contentType, 'Cache-Control': IMMUTABLE }, body };
    },
  };
};

/** The sign-in settings from the function's environment (set by the stack from the deploy config). */
export const consoleConfigFromEnv = (env: NodeJS.ProcessEnv = process.env): ConsoleConfig => {
  const get = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new InternalError('the console function is missing a sign-in setting', { variable: name });
    return value;
  };
  const endSession = env[CONSOLE_ENV.endSessionEndpoint]?.trim();
  return {
    authorizationEndpoint: get(CONSOLE_ENV.authorizationEndpoint),
    tokenEndpoint: get(CONSOLE_ENV.tokenEndpoint),
    clientId: get(CONSOLE_ENV.clientId),
    scopes: get(CONSOLE_ENV.scopes).split(/\s+/),
    rolesClaim: get(CONSOLE_ENV.rolesClaim),
    ...(endSession ? { endSessionEndpoint: endSession } : {}),
  };
};

/** `GET /console/config.json`. */
export const configAnswer = (config: ConsoleConfig): APIGatewayProxyResult => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': NO_CACHE },
  body: JSON.stringify(config),
});

/** Adds the console's security headers to an answer, an error's included. */
export const withHeaders = (answer: APIGatewayProxyResult, headers: Readonly<Record<string, string>>): APIGatewayProxyResult => ({
  ...answer,
  headers: { ...answer.headers, ...headers },
});
