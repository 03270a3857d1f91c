// @aws-sdk/credential-provider-node for the function bundles; see SDK_ALIASES in infra/constructs/service-function.ts.
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
