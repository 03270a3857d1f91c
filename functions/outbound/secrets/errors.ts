/**
 * What can go wrong when a secret is read or written. Each is an {@link HttpProblem}, so a
 * handler may let it through as is; none carries a secret value, a token or a backend URL.
 *
 * - {@link SecretsUnavailable} (503, `Retry-After`): the store is down, sealed, timed out, or
 *   refused the service's own credentials. Retrying later may succeed.
 * - {@link SecretMissing} (500, `secret-missing`): the reference points at nothing (never
 *   written, deleted, destroyed, the key absent, or an empty value). The configuration is
 *   broken; the detail names the reference so that an administrator can fix it.
 * - {@link SecretReferenceInvalid} (500, `secret-reference-invalid`): the stored value is not a
 *   usable reference (`$ENC`, removed in 2021.2, or a malformed or literal value).
 */
import { HttpProblem, ServiceUnavailable } from '../../platform/problem.js';

export class SecretsUnavailable extends ServiceUnavailable {
  constructor(detail = 'The secrets store is unavailable; try again shortly.') {
    super(detail, 5);
  }
}

export class SecretMissing extends HttpProblem {
  constructor(
    readonly reference: string,
    why = 'does not exist (never written, deleted or destroyed)',
  ) {
    super(
      500,
      'secret-missing',
      'Secret Missing',
      `The secret that ${reference} refers to ${why} in the secrets store; store it again or update the reference.`,
    );
  }
}

export class SecretReferenceInvalid extends HttpProblem {
  constructor(detail: string) {
    super(500, 'secret-reference-invalid', 'Secret Reference Invalid', detail);
  }
}
