/**
 * Imports handlers by their module under `functions/` (as the route table names them), after
 * the test has set the environment they read at load.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { proxyHandler } from '../../tools/local/response-stream.js';

export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** `{ key: 'adapters/handlers/create' }` → `{ key: handler of functions/adapters/handlers/create.ts }`. */
export const importHandlers = async <K extends string>(modules: Readonly<Record<K, string>>): Promise<Record<K, Handler>> => {
  const out = {} as Record<K, Handler>;
  for (const [key, file] of Object.entries(modules) as [K, string][]) {
    const url = pathToFileURL(path.join(PROJECT_ROOT, 'functions', `${file}.ts`)).href;
    out[key] = proxyHandler(((await import(/* @vite-ignore */ url)) as { handler: unknown }).handler);
  }
  return out;
};
