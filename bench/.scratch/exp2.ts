import path from 'node:path';
import { buildStack, buildColdChild } from '../build.js';
import { startServices } from '../services.js';
import { firstCallEvent, type CallContext } from '../events.js';
import { measureCold, type ColdVariant } from '../cold.js';
import { summarize } from '../stats.js';
import { PROJECT_ROOT } from '../../infra/constructs/service-function.js';
const workDir = '/tmp/benchwork/w3';
const stack = await buildStack({ workDir, cdkOut: '/tmp/benchwork/out2', port: 3000, log: console.log });
const child = await buildColdChild(workDir);
const services = await startServices({ workDir, assembly: stack.assembly, model: stack.model });
const node = path.join(PROJECT_ROOT, 'node_modules/.bin/node');
const ctx = (round: number): CallContext => ({ round, treeId: services.treeIds[0]!, simulatorUrl: services.simulator.url, simulatorCredentials: services.simulatorCredentials, token: services.token(['admin']), runId: 'x' });
const byEntry = (e: string) => stack.functions.find((f) => f.entry === e)!;
const env = { get: services.environmentOf(byEntry('trees/get').spec), auth: services.environmentOf(byEntry('authorizer/handler').spec) } as Record<string, Record<string, string>>;
const op = { get: 'getTree', auth: 'authorizer', sdk: 'getTree' } as Record<string, string>;
const variants: ColdVariant[] = [{ name: 'bare', kind: 'reference', file: '/tmp/benchwork/w1/fixtures/bare/index.mjs', environment: env.get!, event: (r) => firstCallEvent('getTree', ctx(r)), timeoutSeconds: 10 }];
for (const n of ['get', 'auth', 'sdk']) for (const k of ['esm', 'alias', 'cjs']) variants.push({ name: `${n}-${k}`, kind: 'function', file: `/tmp/benchwork/var/${n}-${k}/index.${k === 'cjs' ? 'cjs' : 'mjs'}`, environment: env[n === 'auth' ? 'auth' : 'get']!, event: (r) => firstCallEvent(op[n]!, ctx(r)), timeoutSeconds: 10 });
const res = await measureCold({ node, child: await buildColdChild(workDir), variants, rounds: Number(process.argv[2] ?? 10) });
for (const [name, s] of res) {
  const f = (k: keyof typeof s[0]) => { const x = summarize(s.map((v) => v[k] as number)); return `${k} ${x.p50.toFixed(1)}/${x.p90.toFixed(1)}`; };
  console.log(name.padEnd(18), f('boot'), f('init'), f('first'), f('total'), f('cpu'));
}
await services.stop();
