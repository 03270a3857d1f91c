/**
 * Records the answers of handlers invoked directly (as the integration tests call them) in the
 * form the openapi.json conformance check reads, so that a test file can hold every answer it
 * got to what the document says of its operation.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { OpenApiSchemas, checkExchanges, readOpenApi } from './openapi-conformance.js';
import type { Exchange } from './recording.js';

export interface ConformanceRecorder {
  /** Keeps one answer to `event` (whose `requestContext.path` is the stage-qualified path). */
  record(event: APIGatewayProxyEvent, result: APIGatewayProxyResult): void;
  /** The problems of every answer kept, against openapi.json; and how many were checked. */
  check(): { problems: readonly string[]; checked: number };
}

export const conformanceRecorder = (): ConformanceRecorder => {
  const exchanges: Exchange[] = [];
  return {
    record(event, result) {
      const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
      const query = new URLSearchParams((event.queryStringParameters ?? {}) as Record<string, string>).toString();
      exchanges.push({
        method: event.httpMethod,
        path: `${event.requestContext.path}${query ? `?${query}` : ''}`,
        status: result.statusCode,
        contentType: headers['content-type'],
        body: result.body ?? '',
        requestId: event.requestContext.requestId,
        headers,
      });
    },
    check() {
      const { problems, checked } = checkExchanges(new OpenApiSchemas(readOpenApi()), exchanges);
      return { problems, checked };
    },
  };
};
