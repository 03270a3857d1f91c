/**
 * The check of a pinned JWKS file (`identity.jwks`) at synth: the authorizer verifies tokens
 * with these keys only, so every key must be one it can use, and none may be a private key (a
 * private key in a config file and in the function's bundle would let anyone who reads either
 * mint tokens). The authorizer filters the file again when it loads (`parseJwks`); here each
 * problem is named, before a deploy.
 */
import { readFileSync } from 'node:fs';
import { ALGORITHM_FAMILIES, algorithmFitsKey, usableJwk } from '../functions/authorizer/jwks.js';

/** JWK members of private or secret keys (RFC 7518 §6.2.2, §6.3.2, §6.4). */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The problems of one key of the set, each a sentence about it. */
const keyProblems = (jwk: unknown, i: number, seen: Set<unknown>): string[] => {
  if (!isObject(jwk)) return [`key ${i} is not a JSON object`];
  const name = typeof jwk['kid'] === 'string' && jwk['kid'] ? `key ${i} (kid ${JSON.stringify(jwk['kid'])})` : `key ${i}`;
  const privateMembers = PRIVATE_JWK_MEMBERS.filter((m) => m in jwk);
  if (privateMembers.length) return [`${name} holds private key material (${privateMembers.join(', ')}): pin the provider's public keys only`];
  const problems: string[] = [];
  if (typeof jwk['kid'] !== 'string' || !jwk['kid']) problems.push(`${name} has no kid: tokens name their key by it`);
  else if (seen.has(jwk['kid'])) problems.push(`${name}: the kid is listed twice`);
  seen.add(jwk['kid']);
  if (jwk['kty'] !== 'RSA' && jwk['kty'] !== 'EC') problems.push(`${name}: kty must be "RSA" or "EC", got ${JSON.stringify(jwk['kty'])}`);
  else if (typeof jwk['alg'] !== 'string')
    problems.push(`${name} has no alg: name the algorithm its tokens are signed with (${Object.keys(ALGORITHM_FAMILIES).join(', ')})`);
  else if (!algorithmFitsKey(jwk['alg'], jwk)) problems.push(`${name}: alg ${JSON.stringify(jwk['alg'])} is not one the authorizer accepts for this key`);
  if (problems.length === 0 && usableJwk(jwk) === undefined)
    problems.push(`${name} is not a usable signature key (use "sig"; RSA of 2048 bits or more, or EC on P-256, P-384 or P-521, with all its public members)`);
  return problems;
};

/** Every problem of the JWKS file, none when the authorizer can verify with each of its keys. */
export const jwksFileProblems = (file: string): string[] => {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return [`${file} is not JSON (${(error as Error).message})`];
  }
  const keys = isObject(doc) ? doc['keys'] : undefined;
  if (!Array.isArray(keys) || keys.length === 0) return [`${file} is not a JWKS: a JSON object whose "keys" lists one key or more`];
  const seen = new Set<unknown>();
  return keys.flatMap((jwk, i) => keyProblems(jwk, i, seen)).map((p) => `${file}: ${p}`);
};
