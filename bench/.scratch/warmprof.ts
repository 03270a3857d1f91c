// usage: warmprof.ts <trees|authorizer|relay> <profdir> [calls]
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { buildStack, buildFixtures, buildScript } from '../build.js';
import { startServices, SIMULATOR_ADAPTER } from '../services.js';
import { firstCallEvent, RELAY_BODY } from '../events.js';
import { runCold } from '../cold.js';
import { runNode } from '../child.js';
import { summarize } from '../stats.js';
import { apiEvent } from '../../test/support/events.js';
import { PROJECT_ROOT } from '../../infra/constructs/service-function.js';
const [mode, out, callsRaw] = process.argv.slice(2) as [string, string, string?];
const calls = Number(callsRaw ?? 5000);
const workDir = '/tmp/benchwork/wp';
const stack = await buildStack({ workDir, cdkOut: process.env.CDK_OUT ?? '/tmp/benchwork/out3', port: 3000, log: console.log });
const fixtures = await buildFixtures(workDir);
if (process.env.UNMIN) { const { bundleEntry } = await import('../build.js'); (fixtures as any).warmTrees = await bundleEntry('wt-unmin', 'bench/fixtures/warm-trees.ts', workDir, { minify: false }); (fixtures as any).warmRelay = await bundleEntry('wr-unmin', 'bench/fixtures/warm-relay.ts', workDir, { minify: false }); }
const cold = await buildScript(workDir, 'cold-child');
const warm = await buildScript(workDir, 'warm-child');
const services = await startServices({ workDir, assembly: stack.assembly, model: stack.model });
const node = path.join(PROJECT_ROOT, 'node_modules/.bin/node');
const byEntry = (e: string) => stack.functions.find((f) => f.entry === e)!;
const put = byEntry('adapters/put');
await runCold(node, cold, { name: 'setup', kind: 'function', file: put.asset.file, environment: services.environmentOf(put.spec), timeoutSeconds: 10, event: () => apiEvent({ method: 'PUT', resource: '/adapters/{name}', pathParameters: { name: SIMULATOR_ADAPTER }, body: { type: 'nso', baseUrl: services.simulator.url, auth: { type: 'basic', ...services.simulatorCredentials } } }) }, 0);
const ctx = { round: 0, treeId: services.treeIds[0]!, simulatorUrl: services.simulator.url, simulatorCredentials: services.simulatorCredentials, token: services.token(['admin']), runId: 'p' };
const wire = async (t: string, pk: string) => JSON.stringify({ Item: (await services.client.send(new GetItemCommand({ TableName: t, Key: { pk: { S: pk } } }))).Item });
let config: unknown; let env: Record<string, string>;
if (mode === 'trees') { env = services.environmentOf(byEntry('trees/get').spec); config = { bundle: pathToFileURL(fixtures.warmTrees.file).href, event: firstCallEvent('getTree', ctx), cannedGetItem: await wire(services.tables.trees!, `TREE#${ctx.treeId}`), warmup: 1000, calls }; }
else if (mode === 'authorizer') { env = services.environmentOf(byEntry('authorizer/handler').spec); const { bundleEntry } = await import('../build.js'); const ab = process.env.UNMIN ? (await bundleEntry('auth-unmin', 'functions/authorizer/handler.ts', workDir, { minify: false })).file : byEntry('authorizer/handler').asset.file; config = { bundle: pathToFileURL(ab).href, event: firstCallEvent('authorizer', ctx), token: ctx.token, jwk: services.signingKey.jwk, warmup: 1000, calls }; }
else { env = services.environmentOf(byEntry('relay/rest-action').spec); const authorization = `Basic ${Buffer.from('admin:bench-simulator-password').toString('base64')}`; config = { bundle: pathToFileURL(fixtures.warmRelay.file).href, event: firstCallEvent('relayRestAction', ctx), direct: { url: services.directSimulator.url + RELAY_BODY.params.path, headers: { accept: RELAY_BODY.params.accept, authorization } }, cannedAdapter: await wire(services.tables.adapters!, 'ADAPTER#lab-nso'), warmup: 200, calls }; }
mkdirSync(out, { recursive: true });
const args = out === 'none' ? [] : ['--cpu-prof', '--cpu-prof-interval=100'];
const { result } = await runNode<any>({ node, args: [...args, warm, mode, Buffer.from(JSON.stringify(config)).toString('base64url')], env, cwd: out === 'none' ? undefined : out, label: 'warm' });
const show = (o: any, p = '') => { for (const [k, v] of Object.entries(o)) { if (Array.isArray(v)) { const s = summarize(v as number[]); console.log(p + k, 'p50', (s.p50 * 1000).toFixed(1), 'µs p90', (s.p90 * 1000).toFixed(1), 'p99', (s.p99 * 1000).toFixed(1)); } else if (typeof v === 'object') show(v, p + k + '.'); } };
show(result);
await services.stop();
