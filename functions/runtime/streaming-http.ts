/**
 * The HTTP handler of a route whose integration streams (a CSV route, `csv` in the route table):
 * {@link httpHandler}'s stack in middy's streaming execution mode, so that a run may answer a
 * stream body (`csvResponse`), written to the client as it is read. A module of its own, so that
 * only the functions that stream bundle the streaming mode.
 */
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import { buildHttpHandler, type HandlerOptions, type HttpRun, type StreamedResult } from '../platform/http-core.js';
import { activeProfile } from './http.js';

/** Wraps a business function as a streaming Lambda proxy handler that follows the active profile. */
export const streamingHttpHandler = <TBody = unknown>(options: Omit<HandlerOptions, 'streaming'>, run: HttpRun<TBody, StreamedResult>) =>
  // The streaming mode pipes a stream body; middy's result type knows only strings.
  buildHttpHandler({ ...options, streaming: executionModeStreamifyResponse }, run as unknown as HttpRun<TBody>, activeProfile());
