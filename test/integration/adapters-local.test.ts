/**
 * Local mode (`LOCAL_MODE=true`, embedded secrets file): loopback orchestrators are allowed,
 * plain passwords land in the 0600 file, and the configured resolver reads them back.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretResolver } from '../../functions/adapters/model.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let put: Handler, del: Handler;
let resolver: SecretResolver;
let dir: string;
let file: string;

beforeAll(async () => {
  await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'netconfig-local-'));
  file = path.join(dir, '.local', 'secrets.json');
  Object.assign(process.env, { SECRETS_BACKEND: 'local', SECRETS_FILE: file, SECRETS_ACCESS: 'write', LOCAL_MODE: 'true' });
  put = (await import('../../functions/adapters/handlers/put.js')).handler as unknown as Handler;
  del = (await import('../../functions/adapters/handlers/delete.js')).handler as unknown as Handler;
  resolver = (await import('../../functions/outbound/secrets/resolver.js')).secretResolver;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const putAdapter = (name: string, baseUrl: string, password = 'local-pw') =>
  invoke(
    put,
    apiEvent({
      method: 'PUT',
      resource: '/adapters/{name}',
      pathParameters: { name },
      body: { type: 'nso', baseUrl, auth: { type: 'basic', username: 'admin', password } },
    }),
  );

describe('adapters in local mode', () => {
  it('accepts a loopback orchestrator and stores the password in the 0600 file', async () => {
    const res = await putAdapter('sim', 'http://127.0.0.1:18888/');
    expect(res.status).toBe(201);
    const reference = (res.body as { auth: { password: string } }).auth.password;
    expect(res.body).toMatchObject({
      baseUrl: 'http://127.0.0.1:18888',
      auth: { password: expect.stringMatching(/^\$VAULT_netconfig\/adapters\/sim\/v[0-9a-z-]+#password$/) },
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).secrets[reference.slice('$VAULT_'.length, -'#password'.length)]).toEqual({ password: 'local-pw' });
    await expect(resolver.resolve(reference)).resolves.toBe('local-pw');
  });

  it('accepts localhost too, but still refuses metadata and link-local addresses', async () => {
    expect((await putAdapter('sim2', 'http://localhost:18889')).status).toBe(201);
    expect((await putAdapter('meta', 'http://169.254.169.254')).status).toBe(400);
    expect((await putAdapter('ll', 'http://[fe80::1]:80')).status).toBe(400);
  });

  it('removes the generated secret from the file when the adapter is deleted', async () => {
    expect((await invoke(del, apiEvent({ method: 'DELETE', resource: '/adapters/{name}', pathParameters: { name: 'sim2' } }))).status).toBe(204);
    const paths = Object.keys((JSON.parse(await readFile(file, 'utf8')) as { secrets: object }).secrets);
    expect(paths.filter((p) => p.startsWith('netconfig/adapters/sim2'))).toEqual([]);
  });
});
