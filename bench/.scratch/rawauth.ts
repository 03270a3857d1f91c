// minimal authorizer floor: fetch JWKS over http, verify RS256, allow
const http = process.getBuiltinModule('node:http');
const crypto = process.getBuiltinModule('node:crypto');
let keys: Map<string, import('node:crypto').KeyObject> | undefined;
const getJson = (url: string) => new Promise<any>((resolve, reject) => { http.get(url, (res) => { const c: Buffer[] = []; res.on('data', (d: Buffer) => c.push(d)); res.on('end', () => resolve(JSON.parse(Buffer.concat(c).toString()))); }).on('error', reject); });
export const handler = async (event: { headers: Record<string, string>; methodArn: string }) => {
  keys ??= new Map(((await getJson(process.env.JWKS_URL!)).keys as any[]).map((k) => [k.kid, crypto.createPublicKey({ key: k, format: 'jwk' })]));
  const token = event.headers['Authorization']!.slice(7);
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString());
  const ok = crypto.verify('sha256', Buffer.from(`${h}.${p}`), keys.get(header.kid)!, Buffer.from(s, 'base64url'));
  if (!ok) throw new Error('Unauthorized');
  return { principalId: JSON.parse(Buffer.from(p, 'base64url').toString()).sub, policyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: event.methodArn }] } };
};
