/**
 * Mock integrations as API Gateway runs them: the request template chosen by `Content-Type`
 * (API Gateway assumes `application/json` when there is none) yields `{"statusCode": N}`;
 * the integration response whose selection pattern matches N (or the default one) gives the
 * method's status, its headers (`responseParameters`) and its body template.
 */
import { chooseTemplate, GATEWAY_MESSAGES, type GatewayError } from './gateway-responses.js';
import { mapHeaders, renderResponseTemplate, renderTemplate, type MappingInput } from './mapping.js';
import type { MockIntegration } from './template.js';

export interface MockRequest extends MappingInput {
  /** The raw request body as text (empty when none). */
  readonly body: string;
}

export type MockResult =
  | { readonly kind: 'response'; readonly statusCode: number; readonly headers: Record<string, string>; readonly body: string }
  | { readonly kind: 'error'; readonly error: GatewayError };

const internal: MockResult = { kind: 'error', error: { type: 'DEFAULT_5XX', message: GATEWAY_MESSAGES.INTERNAL, status: 500 } };
const unsupported: MockResult = {
  kind: 'error',
  error: { type: 'UNSUPPORTED_MEDIA_TYPE', message: GATEWAY_MESSAGES.UNSUPPORTED_MEDIA_TYPE },
};

/** The request template for a content type: exact header, then the bare media type, then `$default`. */
export const requestTemplateFor = (templates: Readonly<Record<string, string>>, contentType: string | undefined): string | undefined => {
  const raw = contentType ?? 'application/json';
  const bare = raw.split(';')[0]!.trim().toLowerCase();
  return templates[raw] ?? Object.entries(templates).find(([k]) => k.toLowerCase() === bare)?.[1] ?? templates['$default'];
};

/** Runs a Mock integration for one request. */
export const runMock = (integration: MockIntegration, request: MockRequest): MockResult => {
  const template = requestTemplateFor(integration.requestTemplates, request.headers['content-type']);
  let integrationBody: string;
  if (template !== undefined) integrationBody = renderTemplate(template, request);
  else if (integration.passthroughBehavior === 'NEVER') return unsupported;
  else if (integration.passthroughBehavior === 'WHEN_NO_TEMPLATES' && Object.keys(integration.requestTemplates).length) return unsupported;
  else integrationBody = request.body;

  // A Mock integration answers with the status its request JSON names; anything else is a configuration error (500).
  let status: unknown;
  try {
    status = (JSON.parse(integrationBody) as { statusCode?: unknown } | null)?.statusCode;
  } catch {
    return internal;
  }
  if (typeof status !== 'number' || !Number.isInteger(status)) return internal;

  const code = String(status);
  const responses = integration.integrationResponses;
  const selected =
    responses.find((r) => r.selectionPattern !== undefined && r.selectionPattern !== '' && new RegExp(`^(?:${r.selectionPattern})$`).test(code)) ??
    responses.find((r) => r.selectionPattern === undefined || r.selectionPattern === '');
  if (!selected) return internal;

  const chosen = chooseTemplate(selected.responseTemplates, request.headers['accept']);
  const rendered = chosen ? renderResponseTemplate(chosen[1], request) : undefined;
  // A header the template sets (`responseOverride`) wins over the mapped one.
  const headers = { ...mapHeaders(selected.responseParameters, 'method.response', request), ...rendered?.headers };
  const hasContentType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
  return {
    kind: 'response',
    statusCode: Number(selected.statusCode),
    headers: { ...(hasContentType ? {} : { 'Content-Type': chosen?.[0] ?? 'application/json' }), ...headers },
    // No template: the (empty) Mock body passes through.
    body: rendered?.body ?? '',
  };
};
