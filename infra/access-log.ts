/**
 * The stage's access log: one JSON line per request, API Gateway's standard fields plus who
 * called (the authorizer's principal and the roles it found in the token), so that the access
 * log alone answers "who did what, from where, with what result". docs/operations.md ("Audit")
 * lists the fields.
 */
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';

/**
 * Field name → the `$context` variable API Gateway fills in. `principal` and `roles` are empty
 * on public routes and on requests the authorizer refused (`authorizerStatus` and
 * `authorizerError` then say why).
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: AccessLogField.contextRequestId(),
  extendedRequestId: AccessLogField.contextExtendedRequestId(),
  requestTime: AccessLogField.contextRequestTime(),
  requestTimeEpoch: AccessLogField.contextRequestTimeEpoch(),
  ip: AccessLogField.contextIdentitySourceIp(),
  userAgent: AccessLogField.contextIdentityUserAgent(),
  principal: AccessLogField.contextAuthorizerPrincipalId(),
  roles: AccessLogField.contextAuthorizer('roles'),
  httpMethod: AccessLogField.contextHttpMethod(),
  resourcePath: AccessLogField.contextResourcePath(),
  path: AccessLogField.contextPath(),
  protocol: AccessLogField.contextProtocol(),
  status: AccessLogField.contextStatus(),
  responseLength: AccessLogField.contextResponseLength(),
  responseLatency: AccessLogField.contextResponseLatency(),
  integrationStatus: AccessLogField.contextIntegrationStatus(),
  integrationLatency: AccessLogField.contextIntegrationLatency(),
  authorizerStatus: AccessLogField.contextAuthorizerStatus(),
  authorizerError: AccessLogField.contextAuthorizerError(),
  errorMessage: AccessLogField.contextErrorMessage(),
  errorType: AccessLogField.contextErrorResponseType(),
  wafResponseCode: AccessLogField.contextWafResponseCode(),
  xrayTraceId: AccessLogField.contextXrayTraceId(),
};

/** The access log format of the stage: {@link ACCESS_LOG_FIELDS} as one JSON object per line. */
export const accessLogFormat = (): AccessLogFormat => AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));
