/**
 * What the console's handlers share: the built files in the bundle (`CONSOLE_FILES`, relative
 * to the bundle's root) and one wrapper that puts the security headers on every answer, the
 * problems the middleware renders included.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { bundledFileFromEnv } from '../platform/env.js';
import { type HandlerOptions, type HttpRun, staticHttpHandler } from '../platform/http-core.js';
import { CONSOLE_BUNDLE_DIR, CONSOLE_ENV, securityHeaders } from './model.js';
import { consoleFiles, withHeaders, type ConsoleFiles } from './service.js';

let files: ConsoleFiles | undefined;

/** The built console shipped with this function (by default `console/` at the bundle's root). */
export const bundledConsole = (): ConsoleFiles =>
  (files ??= consoleFiles(
    bundledFileFromEnv(CONSOLE_ENV.files, { ...process.env, [CONSOLE_ENV.files]: process.env[CONSOLE_ENV.files] || CONSOLE_BUNDLE_DIR })!,
  ));

/** A console route's Lambda handler: the shared middleware stack (no profile: the console reads no table), then the console's headers. */
export const consoleHandler = <TBody = unknown>(options: HandlerOptions, run: HttpRun<TBody>) => {
  const inner = staticHttpHandler(options, run) as unknown as (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  const headers = securityHeaders(process.env[CONSOLE_ENV.tokenEndpoint]);
  return async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => withHeaders(await inner(event, context), headers);
};
