import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4 } from 'node:net';

/**
 * A throwaway self-signed certificate (P-256, valid 2020–2120) for 127.0.0.1 and localhost,
 * used only to run the NSO simulator over HTTPS in tests. Not a secret of any real system.
 */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvlknMfsiuCiaxAMu
asdLniL8i26OXRxurOHOsq6To9GhRANCAASbrL95rJFMmw9NKMlKZtshws80O4rM
qyTKxe7W8oaT25IMQ2P7k85VXbawDBnXeZl85IuFB/yHHb6jfszUdK8c
-----END PRIVATE KEY-----
`;

export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBeDCCAR+gAwIBAgIBATAKBggqhkjOPQQDAjAdMRswGQYDVQQDDBJuc28tc2lt
dWxhdG9yLnRlc3QwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMB0x
GzAZBgNVBAMMEm5zby1zaW11bGF0b3IudGVzdDBZMBMGByqGSM49AgEGCCqGSM49
AwEHA0IABJusv3mskUybD00oyUpm2yHCzzQ7isyrJMrF7tbyhpPbkgxDY/uTzlVd
trAMGdd5mXzki4UH/IcdvqN+zNR0rxyjTjBMMA8GA1UdEwEB/wQFMAMBAf8wGgYD
VR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MB0GA1UdDgQWBBTsFOcYwQBBxUU/HvG/
ljuwD3jINDAKBggqhkjOPQQDAgNHADBEAiA6JJwyCVqp4bbZxn3h6qRH18HffMhe
SSQbJ67ckGtF+AIgHaiT6p1hyEIHzvrrl0tzj02w6BwR5/Dwd+eoeJSmmmw=
-----END CERTIFICATE-----
`;

/** A certificate and its private key, PEM. */
export interface TestKeyPair {
  readonly key: string;
  readonly cert: string;
}

/** A certificate authority made for one test run: its certificate, and servers' certificates it signs. */
export interface TestCertificateAuthority {
  /** The CA's own certificate (PEM): what a bundle of trusted CAs holds. */
  readonly cert: string;
  /** A server certificate for these host names and IP addresses (default 127.0.0.1 and localhost), signed by this CA. */
  issue(hosts?: readonly string[]): TestKeyPair;
}

// DER encoding (X.690), just what an X.509 v3 certificate needs.
const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
};
const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);
const oid = (dotted: string): Buffer => {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
};
const positiveInteger = (bytes: Buffer): Buffer => tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
const bitString = (bytes: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.from([unusedBits]), bytes);
const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const TRUE = Buffer.from([0x01, 0x01, 0xff]);
const time = (date: Date): Buffer => {
  const text = date.toISOString().replace(/[-:T]|\.\d+/g, '');
  // UTCTime (two-digit year) up to 2049, GeneralizedTime after (RFC 5280 §4.1.2.5).
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(text.slice(2))) : tlv(0x18, Buffer.from(text));
};
const commonName = (name: string): Buffer => sequence(tlv(0x31, sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(name)))));
const extension = (id: string, critical: boolean, value: Buffer): Buffer => sequence(oid(id), ...(critical ? [TRUE] : []), octetString(value));
const ECDSA_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

const generateKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const keyIdOf = (publicKey: KeyObject): Buffer =>
  createHash('sha1')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest();

const certificate = (options: {
  readonly subject: string;
  readonly issuer: string;
  readonly publicKey: KeyObject;
  readonly signingKey: KeyObject;
  readonly issuerKeyId: Buffer;
  readonly extensions: readonly Buffer[];
}): string => {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const now = Date.now();
  const tbs = sequence(
    tlv(0xa0, positiveInteger(Buffer.from([2]))), // v3
    positiveInteger(serial),
    ECDSA_SHA256,
    commonName(options.issuer),
    sequence(time(new Date(now - 3_600_000)), time(new Date(now + 86_400_000))),
    commonName(options.subject),
    options.publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      sequence(
        ...options.extensions,
        extension('2.5.29.14', false, octetString(keyIdOf(options.publicKey))),
        extension('2.5.29.35', false, sequence(tlv(0x80, options.issuerKeyId))),
      ),
    ),
  );
  const der = sequence(tbs, ECDSA_SHA256, bitString(sign('sha256', tbs, options.signingKey)));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
};

/** A general name of a subjectAltName: an IPv4 address `[7]`, else a DNS name `[2]`. */
const generalName = (host: string): Buffer => (isIPv4(host) ? tlv(0x87, Buffer.from(host.split('.').map(Number))) : tlv(0x82, Buffer.from(host)));

/**
 * A new certificate authority (P-256, valid from an hour ago for a day), generated with
 * node:crypto in about a millisecond: no key or certificate of it outlives the test run.
 */
export const createTestCa = (name = 'netconfig test CA'): TestCertificateAuthority => {
  const { publicKey, privateKey } = generateKey();
  const keyId = keyIdOf(publicKey);
  const cert = certificate({
    subject: name,
    issuer: name,
    publicKey,
    signingKey: privateKey,
    issuerKeyId: keyId,
    extensions: [
      extension('2.5.29.19', true, sequence(TRUE)), // basicConstraints: CA
      extension('2.5.29.15', true, bitString(Buffer.from([0x06]), 1)), // keyUsage: keyCertSign, cRLSign
    ],
  });
  return {
    cert,
    issue: (hosts = ['127.0.0.1', 'localhost']) => {
      const leaf = generateKey();
      return {
        key: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
        cert: certificate({
          subject: hosts[0] ?? 'server',
          issuer: name,
          publicKey: leaf.publicKey,
          signingKey: privateKey,
          issuerKeyId: keyId,
          extensions: [
            extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
            extension('2.5.29.15', true, bitString(Buffer.from([0x80]), 7)), // keyUsage: digitalSignature
            extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
            extension('2.5.29.17', false, sequence(...hosts.map(generalName))), // subjectAltName
          ],
        }),
      };
    },
  };
};
