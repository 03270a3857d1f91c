/**
 * Where `$VAULT_` references are resolved. Deployed: HashiCorp Vault KV v2, whose token or
 * AppRole secret id is kept in AWS Secrets Manager (never in a plain environment value).
 * Local mode: an embedded file store under `.local/`.
 *
 * Least privilege: functions that only resolve references (the relay, health checks) get a
 * reader credential; only the adapter routes that store and delete secrets get the writer one.
 * Give the two credentials Vault policies to match (see docs/adapters-and-relay.md, "Vault").
 */
import { RemovalPolicy, SecretValue } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { UNSET_CREDENTIAL } from '../../functions/outbound/secrets/credentials.js';
import { isManagedPath, pathProblem } from '../../functions/outbound/secrets/reference.js';
import type { ServiceFunction } from './service-function.js';

export type SecretsAccess = 'read' | 'write';

/** One Vault identity: where its token or AppRole secret id is kept, and its AppRole role id. */
export interface VaultCredential {
  /** Name of an existing Secrets Manager secret holding the token or AppRole secret id; default: one is created. */
  readonly secretName?: string;
  /** AppRole role id (required with AppRole). */
  readonly roleId?: string;
}

export type SecretsProps =
  | { readonly backend: 'local'; readonly file: string }
  | {
      readonly backend: 'vault';
      readonly address: string;
      readonly mount?: string;
      readonly authMethod?: 'token' | 'approle';
      /** The identity of functions that only resolve references. */
      readonly reader?: VaultCredential;
      /** The identity of functions that also store and delete secrets. */
      readonly writer?: VaultCredential;
      /** Vault Enterprise / HCP namespace (`X-Vault-Namespace`). */
      readonly namespace?: string;
      /** How long a resolved secret is reused in a warm function; default 60 s (the function's own default). */
      readonly cacheTtlSeconds?: number;
      /**
       * Secret paths (prefixes) admins may name as `$VAULT_` references in adapters; default
       * none (only plain values, which the service stores itself). Any admin may use these
       * secrets with any orchestrator: list only secrets meant for that.
       */
      readonly referencePrefixes?: readonly string[];
      /** Encrypts the credential secrets created here (a customer-managed key); absent: the AWS-managed key. */
      readonly encryptionKey?: IKey;
    };

interface Identity {
  readonly secret: ISecret;
  readonly roleId?: string;
}

export class Secrets extends Construct {
  /** The Secrets Manager secrets holding the Vault credentials, by access. */
  readonly credentials?: Readonly<Record<SecretsAccess, ISecret>>;
  readonly #environment: Record<string, string>;
  readonly #identities?: Readonly<Record<SecretsAccess, Identity>>;

  constructor(scope: Construct, id: string, props: SecretsProps) {
    super(scope, id);
    if (props.backend === 'local') {
      this.#environment = { SECRETS_BACKEND: 'local', SECRETS_FILE: props.file };
      return;
    }
    const authMethod = props.authMethod ?? 'token';
    // Checked at synth: a function missing these would only fail at its first call.
    if (authMethod === 'approle' && (!props.reader?.roleId || !props.writer?.roleId)) {
      throw new Error('Secrets: AppRole needs a reader and a writer role id (vault.reader.roleId, vault.writer.roleId)');
    }
    if (props.cacheTtlSeconds !== undefined && !(Number.isInteger(props.cacheTtlSeconds) && props.cacheTtlSeconds >= 0 && props.cacheTtlSeconds <= 3600)) {
      throw new Error('Secrets: cacheTtlSeconds must be an integer from 0 to 3600');
    }
    for (const prefix of props.referencePrefixes ?? []) {
      const problem = pathProblem(prefix);
      if (problem || isManagedPath(`${prefix}/`))
        throw new Error(`Secrets: referencePrefixes entry "${prefix}" is not a usable secret path (${problem ?? 'the service manages it'})`);
    }
    const identity = (logicalId: string, what: string, credential: VaultCredential = {}): Identity => ({
      secret: credential.secretName
        ? Secret.fromSecretNameV2(this, logicalId, credential.secretName)
        : new Secret(this, logicalId, {
            description: `Vault token or AppRole secret id of the functions that ${what}. Set its value after the first deploy.`,
            // A placeholder the functions recognise (503, "not set") rather than a generated
            // random value they would send to Vault. It is no secret; the template keeps it
            // unchanged, so CloudFormation never writes over the value set by hand.
            secretStringValue: SecretValue.unsafePlainText(UNSET_CREDENTIAL),
            // Its value is set by hand after the first deploy: kept when the stack lets go of it.
            removalPolicy: RemovalPolicy.RETAIN,
            ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
          }),
      ...(credential.roleId ? { roleId: credential.roleId } : {}),
    });
    this.#identities = {
      read: identity('VaultReaderCredentials', 'resolve $VAULT_ references', props.reader),
      write: identity('VaultWriterCredentials', 'store adapter secrets', props.writer),
    };
    this.credentials = { read: this.#identities.read.secret, write: this.#identities.write.secret };
    this.#environment = {
      SECRETS_BACKEND: 'vault',
      VAULT_ADDR: props.address,
      VAULT_MOUNT: props.mount ?? 'secret',
      VAULT_AUTH_METHOD: authMethod,
      ...(props.namespace ? { VAULT_NAMESPACE: props.namespace } : {}),
      ...(props.cacheTtlSeconds !== undefined ? { SECRETS_CACHE_TTL_SECONDS: String(props.cacheTtlSeconds) } : {}),
      ...(props.referencePrefixes?.length ? { SECRETS_REFERENCE_PREFIXES: props.referencePrefixes.join(',') } : {}),
    };
  }

  /** Lets a function resolve references (read) or also store new secrets (write), with that identity only. */
  bind(fn: ServiceFunction, access: SecretsAccess): void {
    for (const [k, v] of Object.entries(this.#environment)) fn.function.addEnvironment(k, v);
    fn.function.addEnvironment('SECRETS_ACCESS', access);
    const identity = this.#identities?.[access];
    if (!identity) return;
    identity.secret.grantRead(fn.function);
    fn.function.addEnvironment('VAULT_CREDENTIALS_SECRET_ARN', identity.secret.secretArn);
    if (identity.roleId) fn.function.addEnvironment('VAULT_ROLE_ID', identity.roleId);
  }
}
