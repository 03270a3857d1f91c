/**
 * The private CAs that outbound HTTPS trusts besides Node's public roots: the PEM bundle that
 * `NETCONFIG_CA_BUNDLE` names, read and checked once per container when this module loads, so
 * that a bad bundle stops the container's init with a clear error rather than failing each
 * request. The shared HTTP client (http-client.ts) is its only user.
 */
import type { SecureContext } from 'node:tls';
import { bundledFileFromEnv } from '../platform/env.js';

/** Names a PEM file of CA certificates that https connections trust besides Node's public roots. */
export const CA_BUNDLE_VARIABLE = 'NETCONFIG_CA_BUNDLE';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END ([A-Z0-9 ]+)-----/g;

/**
 * The certificates (PEM, one per entry) of the bundle that `NETCONFIG_CA_BUNDLE` names, or
 * undefined when the variable is unset or empty. A relative path resolves against
 * `LAMBDA_TASK_ROOT` (the root of the function's code, where the stack ships the bundle); an
 * absolute one is used as is. Text outside PEM blocks (comments, as in the bundles operating
 * systems ship) is ignored; every block must be a certificate that parses.
 *
 * @throws a configuration error naming the variable and the file when the path cannot be
 *   resolved, the file cannot be read, or it holds anything but valid certificates, or none.
 */
export const caBundleFromEnv = (env: NodeJS.ProcessEnv = process.env): readonly string[] | undefined => {
  const file = bundledFileFromEnv(CA_BUNDLE_VARIABLE, env);
  if (file === undefined) return undefined;
  const refused = (why: string): Error => new Error(`configuration error: ${CA_BUNDLE_VARIABLE} names ${file}, which ${why}`);
  let text: string;
  try {
    text = process.getBuiltinModule('node:fs').readFileSync(file, 'utf8');
  } catch (error) {
    throw refused(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const certificates: string[] = [];
  for (const [block, label, , endLabel] of text.matchAll(PEM_BLOCK)) {
    const position = certificates.length + 1;
    if (endLabel !== label) throw refused(`holds a malformed PEM block (block ${position} begins ${label} and ends ${endLabel})`);
    if (label !== 'CERTIFICATE') throw refused(`holds a ${label} block (PEM block ${position}): a CA bundle holds CERTIFICATE blocks only`);
    try {
      // About 0.2 ms a certificate; node:crypto itself is loaded anyway (request ids, tracing).
      new (process.getBuiltinModule('node:crypto').X509Certificate)(block);
    } catch {
      throw refused(`holds a certificate that does not parse (PEM block ${position})`);
    }
    certificates.push(`${block}\n`);
  }
  if (certificates.length === 0) throw refused('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return certificates;
};

/** What https connections trust beyond Node's default store; both parts built on first use. */
export interface Trust {
  /** Node's public roots, then the private CAs. */
  certificates(): readonly string[];
  /**
   * One secure context for every connection: given as a `ca` list instead, each new
   * connection would parse the ~120 roots again (about 5 ms of CPU each).
   */
  context(): SecureContext;
}

/** The trust of a client given these private CAs; undefined (Node's default store) for none. */
export const trustIn = (privateCas: readonly string[]): Trust | undefined => {
  if (privateCas.length === 0) return undefined;
  let certificates: readonly string[] | undefined;
  let context: SecureContext | undefined;
  const trust: Trust = {
    // Node's `ca` option replaces its roots: the public ones are passed again, so that a
    // private CA is added to them, never put in their place.
    certificates: () => (certificates ??= [...process.getBuiltinModule('node:tls').rootCertificates, ...privateCas]),
    context: () => (context ??= process.getBuiltinModule('node:tls').createSecureContext({ ca: [...trust.certificates()] })),
  };
  return trust;
};

/** Read once per container, at load (the cold start); shared by every client of the container. */
export const configuredTrust = trustIn(caBundleFromEnv() ?? []);
