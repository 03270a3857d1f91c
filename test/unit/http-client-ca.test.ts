/**
 * The private CA bundle of the shared HTTP client (`NETCONFIG_CA_BUNDLE`): where the file is
 * looked for, what it may hold, the errors that name the variable and the file, and that its
 * certificates are added to Node's public roots, never put in their place.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rootCertificates } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { caBundleFromEnv } from '../../functions/outbound/ca-bundle.js';
import { createHttpClient } from '../../functions/outbound/http-client.js';
import { createTestCa, TEST_TLS_KEY } from '../support/relay-tls.js';

let dir: string;
const first = createTestCa('first private CA');
const second = createTestCa('second private CA');
const file = (name: string) => path.join(dir, name);
/** The client module as a fresh container loads it, with NETCONFIG_CA_BUNDLE relative to the task root. */
const loadWithBundle = (bundle: string) => {
  vi.stubEnv('NETCONFIG_CA_BUNDLE', bundle);
  vi.stubEnv('LAMBDA_TASK_ROOT', dir);
  vi.resetModules();
  return import('../../functions/outbound/http-client.js');
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ca-bundle-'));
  await mkdir(path.join(dir, 'certs'));
  await writeFile(file('certs/private-ca.pem'), first.cert);
  // As operating systems ship bundles: comment lines between the blocks.
  await writeFile(file('two.pem'), `# first\n${first.cert}\n# second\n${second.cert}`);
  await writeFile(file('empty.pem'), '');
  await writeFile(file('der.cer'), Buffer.from(first.cert.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64'));
  await writeFile(file('with-key.pem'), `${first.cert}${TEST_TLS_KEY}`);
  await writeFile(file('garbled.pem'), first.cert.replace(/\n[A-Za-z0-9+/]{64}\n/, '\nAAAA\n'));
  await writeFile(file('mismatched.pem'), first.cert.replace('END CERTIFICATE', 'END X509 CRL'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('the CA bundle named by NETCONFIG_CA_BUNDLE', () => {
  it('is absent when the variable is unset or empty', () => {
    expect(caBundleFromEnv({})).toBeUndefined();
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: '' })).toBeUndefined();
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: '  ' })).toBeUndefined();
  });

  it('resolves a relative path against LAMBDA_TASK_ROOT, and uses an absolute one as is', () => {
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: 'certs/private-ca.pem', LAMBDA_TASK_ROOT: dir })).toEqual([first.cert]);
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: './certs/../certs/private-ca.pem', LAMBDA_TASK_ROOT: dir })).toEqual([first.cert]);
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: file('certs/private-ca.pem'), LAMBDA_TASK_ROOT: '/nowhere' })).toEqual([first.cert]);
  });

  it('holds every certificate of the file, in order, and ignores the text between them', () => {
    expect(caBundleFromEnv({ NETCONFIG_CA_BUNDLE: file('two.pem') })).toEqual([first.cert, second.cert]);
  });

  it.each([
    ['a file that is not there', 'missing.pem', /which cannot be read \(ENOENT\)/],
    ['a directory', 'certs', /which cannot be read \(EISDIR\)/],
    ['an empty file', 'empty.pem', /which holds no PEM certificate/],
    ['a DER certificate', 'der.cer', /which holds no PEM certificate/],
    ['a private key next to the certificate', 'with-key.pem', /which holds a PRIVATE KEY block \(PEM block 2\): a CA bundle holds CERTIFICATE blocks only/],
    ['a certificate that does not parse', 'garbled.pem', /which holds a certificate that does not parse \(PEM block 1\)/],
    ['a block whose end does not match its beginning', 'mismatched.pem', /which holds a malformed PEM block/],
  ])('refuses %s, naming the variable and the file', (_, name, reason) => {
    const error = (() => {
      try {
        caBundleFromEnv({ NETCONFIG_CA_BUNDLE: name, LAMBDA_TASK_ROOT: dir });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toMatch(reason);
    expect(error?.message).toContain(`configuration error: NETCONFIG_CA_BUNDLE names ${file(name)}, `);
  });

  it('refuses a relative path when LAMBDA_TASK_ROOT is not set', () => {
    expect(() => caBundleFromEnv({ NETCONFIG_CA_BUNDLE: 'certs/private-ca.pem' })).toThrow(
      'configuration error: NETCONFIG_CA_BUNDLE is a relative path (certs/private-ca.pem), and LAMBDA_TASK_ROOT, which it resolves against, is not set',
    );
  });

  it('stops the module from loading when the bundle is bad (the container fails at init, not per request)', async () => {
    await expect(loadWithBundle('with-key.pem')).rejects.toThrow(`NETCONFIG_CA_BUNDLE names ${file('with-key.pem')}, which holds a PRIVATE KEY block`);
  });
});

describe('whom the shared client trusts', () => {
  it("trusts Node's default store, as is, when no bundle is configured", () => {
    const client = createHttpClient({ allowLoopback: false });
    expect(client.trustedCertificates()).toBeUndefined();
    client.close();
  });

  it("adds the bundle's certificates to Node's public roots, read once when the module loads", async () => {
    const loaded = await loadWithBundle('two.pem');
    // Changing the variable afterwards changes nothing: the bundle was read at load.
    vi.stubEnv('NETCONFIG_CA_BUNDLE', 'missing.pem');
    const client = loaded.createHttpClient({ allowLoopback: false });
    const trusted = client.trustedCertificates();
    expect(trusted).toEqual([...rootCertificates, first.cert, second.cert]);
    expect(rootCertificates.length).toBeGreaterThan(100);
    client.close();
  });

  it('takes the certificates given to it in place of the bundle', async () => {
    const loaded = await loadWithBundle('two.pem');
    const client = loaded.createHttpClient({ allowLoopback: false, ca: second.cert });
    expect(client.trustedCertificates()).toEqual([...rootCertificates, second.cert]);
    client.close();
  });
});
