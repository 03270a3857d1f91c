/**
 * API Gateway's own answers (unknown route, 401, 403, 413, 504…), rendered from the
 * template's `AWS::ApiGateway::GatewayResponse` entries as API Gateway picks them: the
 * response of the type; else `DEFAULT_4XX`/`DEFAULT_5XX` with the type's status; else the
 * built-in `{"message": …}`.
 */
import { mapHeaders, renderTemplate, type MappingInput } from './mapping.js';
import type { GatewayResponseSpec } from './template.js';

export type GatewayResponseType =
  | 'ACCESS_DENIED'
  | 'API_CONFIGURATION_ERROR'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'AUTHORIZER_FAILURE'
  | 'BAD_REQUEST_PARAMETERS'
  | 'BAD_REQUEST_BODY'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX'
  | 'EXPIRED_TOKEN'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'INVALID_API_KEY'
  | 'INVALID_SIGNATURE'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'QUOTA_EXCEEDED'
  | 'REQUEST_TOO_LARGE'
  | 'RESOURCE_NOT_FOUND'
  | 'THROTTLED'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'WAF_FILTERED';

/** API Gateway's status for each type when the template sets none. */
export const DEFAULT_STATUS: Readonly<Record<GatewayResponseType, number | undefined>> = {
  ACCESS_DENIED: 403,
  API_CONFIGURATION_ERROR: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  AUTHORIZER_FAILURE: 500,
  BAD_REQUEST_PARAMETERS: 400,
  BAD_REQUEST_BODY: 400,
  DEFAULT_4XX: undefined,
  DEFAULT_5XX: undefined,
  EXPIRED_TOKEN: 403,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  INVALID_API_KEY: 403,
  INVALID_SIGNATURE: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  QUOTA_EXCEEDED: 429,
  REQUEST_TOO_LARGE: 413,
  RESOURCE_NOT_FOUND: 404,
  THROTTLED: 429,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  WAF_FILTERED: 403,
};

/** API Gateway's `$context.error.message` for each situation the local gateway meets. */
export const GATEWAY_MESSAGES = {
  MISSING_AUTHENTICATION_TOKEN: 'Missing Authentication Token',
  UNAUTHORIZED: 'Unauthorized',
  ACCESS_DENIED: 'User is not authorized to access this resource',
  ACCESS_DENIED_EXPLICIT: 'User is not authorized to access this resource with an explicit deny',
  REQUEST_TOO_LARGE: 'Request Too Long',
  INTEGRATION_TIMEOUT: 'Endpoint request timed out',
  INTERNAL: 'Internal server error',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported Media Type',
} as const;

/** One gateway error: its type, message, and the status when API Gateway fixes it (a 502 under DEFAULT_5XX). */
export interface GatewayError {
  readonly type: GatewayResponseType;
  /** `null` renders as `null` in `$context.error.messageString`, as for authorizer failures. */
  readonly message: string | null;
  /** The status when the type itself has none (DEFAULT_5XX for a bad Lambda answer is 502). */
  readonly status?: number;
}

export interface RenderedResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const BUILT_IN_TEMPLATE = '{"message":$context.error.messageString}';

/** Chooses the body template by the request's `Accept`, as API Gateway does; `application/json` otherwise. */
export const chooseTemplate = (templates: Readonly<Record<string, string>>, accept: string | undefined): [string, string] | undefined => {
  const entries = Object.entries(templates);
  if (!entries.length) return undefined;
  for (const range of (accept ?? '').split(',').map((s) => s.split(';')[0]!.trim().toLowerCase())) {
    const hit = entries.find(([type]) => type.toLowerCase() === range);
    if (hit) return hit;
  }
  return entries.find(([type]) => type === 'application/json') ?? entries[0];
};

/**
 * Renders a gateway error. `input.context` must hold the request's context variables; the
 * error's own (`error.message`, `error.messageString`, `error.responseType`) are added here.
 */
export const renderGatewayResponse = (responses: Readonly<Record<string, GatewayResponseSpec>>, error: GatewayError, input: MappingInput): RenderedResponse => {
  const typeStatus = DEFAULT_STATUS[error.type];
  const fallbackType = (error.status ?? typeStatus ?? 500) >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
  const spec = responses[error.type] ?? responses[fallbackType];
  // The response's own status wins; else the one API Gateway uses for this error, else the type's.
  const statusCode = spec?.statusCode ?? error.status ?? typeStatus ?? 500;
  const context = {
    ...input.context,
    error: {
      message: error.message ?? '',
      messageString: JSON.stringify(error.message),
      responseType: error.type,
      validationErrorString: '',
    },
  };
  const mapping: MappingInput = { ...input, context };
  const template = chooseTemplate(spec?.responseTemplates ?? {}, input.headers['accept']) ?? ['application/json', BUILT_IN_TEMPLATE];
  const mapped = mapHeaders(spec?.responseParameters ?? {}, 'gatewayresponse', mapping);
  const hasContentType = Object.keys(mapped).some((h) => h.toLowerCase() === 'content-type');
  return {
    statusCode,
    // API Gateway also sends `x-amzn-ErrorType`; it is left out here: no AWS error name reaches a client.
    headers: { ...(hasContentType ? {} : { 'Content-Type': template[0] }), ...mapped },
    body: renderTemplate(template[1], mapping),
  };
};
