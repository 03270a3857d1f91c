/**
 * Where `$VAULT_` references are resolved. Deployed: HashiCorp Vault KV v2, whose token or
 * AppRole secret id is kept in AWS Secrets Manager (never in a plain environment value).
 * Local mode: an embedded file store under `.local/`.
 */
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.js';

export type SecretsProps =
  | { readonly backend: 'local'; readonly file: string }
  | {
      readonly backend: 'vault';
      readonly address: string;
      readonly mount?: string;
      readonly authMethod?: 'token' | 'approle';
      readonly roleId?: string;
      /** Name of an existing Secrets Manager secret holding the token or AppRole secret id. */
      readonly credentialsSecretName?: string;
      /** Vault Enterprise / HCP namespace (`X-Vault-Namespace`). */
      readonly namespace?: string;
      /** How long a resolved secret is reused in a warm function; default 60 s (the function's own default). */
      readonly cacheTtlSeconds?: number;
    };

export class Secrets extends Construct {
  readonly credentials?: ISecret;
  readonly #environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: SecretsProps) {
    super(scope, id);
    if (props.backend === 'local') {
      this.#environment = { SECRETS_BACKEND: 'local', SECRETS_FILE: props.file };
      return;
    }
    const authMethod = props.authMethod ?? 'token';
    // Checked at synth: a function missing these would only fail at its first call.
    if (authMethod === 'approle' && !props.roleId) throw new Error('Secrets: AppRole needs a role id (context vaultRoleId)');
    if (props.cacheTtlSeconds !== undefined && !(Number.isInteger(props.cacheTtlSeconds) && props.cacheTtlSeconds >= 0 && props.cacheTtlSeconds <= 3600)) {
      throw new Error('Secrets: cacheTtlSeconds must be an integer from 0 to 3600');
    }
    this.credentials = props.credentialsSecretName
      ? Secret.fromSecretNameV2(this, 'VaultCredentials', props.credentialsSecretName)
      : new Secret(this, 'VaultCredentials', {
          description: 'Vault token or AppRole secret id used to resolve $VAULT_ references. Set its value after the first deploy.',
        });
    this.#environment = {
      SECRETS_BACKEND: 'vault',
      VAULT_ADDR: props.address,
      VAULT_MOUNT: props.mount ?? 'secret',
      VAULT_AUTH_METHOD: authMethod,
      ...(props.roleId ? { VAULT_ROLE_ID: props.roleId } : {}),
      ...(props.namespace ? { VAULT_NAMESPACE: props.namespace } : {}),
      ...(props.cacheTtlSeconds !== undefined ? { SECRETS_CACHE_TTL_SECONDS: String(props.cacheTtlSeconds) } : {}),
      VAULT_CREDENTIALS_SECRET_ARN: this.credentials.secretArn,
    };
  }

  /** Lets a function resolve references (read) or also store new secrets (write). */
  bind(fn: ServiceFunction, access: 'read' | 'write'): void {
    for (const [k, v] of Object.entries(this.#environment)) fn.function.addEnvironment(k, v);
    this.credentials?.grantRead(fn.function);
    fn.function.addEnvironment('SECRETS_ACCESS', access);
  }
}
