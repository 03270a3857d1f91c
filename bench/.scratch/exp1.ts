import path from 'node:path';
import { buildStack, buildFixtures, buildColdChild } from '../build.js';
import { startServices, SIMULATOR_ADAPTER } from '../services.js';
import { firstCallEvent, operationOfEntry, type CallContext } from '../events.js';
import { measureCold, runCold, type ColdVariant } from '../cold.js';
import { summarize } from '../stats.js';
import { apiEvent } from '../../test/support/events.js';
import { PROJECT_ROOT } from '../../infra/constructs/service-function.js';

const workDir = '/tmp/benchwork/w1';
const log = (l: string) => console.log(l);
const stack = await buildStack({ workDir, cdkOut: '/tmp/benchwork/out3', port: 3000, log });
for (const f of stack.functions) console.log(f.label, f.entry ?? 'NO MATCH', f.asset.bytes, f.rebuild?.bytes, f.asset.sha256 === f.rebuild?.sha256);
const fixtures = await buildFixtures(workDir);
const { bundleEntry } = await import('../build.js');
const raw = await bundleEntry('rawauth', 'bench/.scratch/rawauth.ts', workDir + '/x');
const child = await buildColdChild(workDir);
const services = await startServices({ workDir, assembly: stack.assembly, model: stack.model });
const node = path.join(PROJECT_ROOT, 'node_modules/.bin/node');
const ctx = (round: number): CallContext => ({ round, treeId: services.treeIds[0]!, simulatorUrl: services.simulator.url, simulatorCredentials: services.simulatorCredentials, token: services.token(['admin']), runId: 'x' + Date.now().toString(36) });
const byEntry = (e: string) => stack.functions.find((f) => f.entry === e)!;
const fnVariant = (e: string): ColdVariant => { const f = byEntry(e); return { name: operationOfEntry(e), kind: 'function', file: f.asset.file, environment: services.environmentOf(f.spec), event: (r) => firstCallEvent(operationOfEntry(e), ctx(r)), timeoutSeconds: f.spec.timeoutSeconds }; };
const getTreeEnv = services.environmentOf(byEntry('trees/get').spec);
const relayEnv = services.environmentOf(byEntry('relay/rest-action').spec);
// register lab-nso
const put = byEntry('adapters/put');
await runCold(node, child, { name: 'setup', kind: 'function', file: put.asset.file, environment: services.environmentOf(put.spec), timeoutSeconds: 10, event: () => apiEvent({ method: 'PUT', resource: '/adapters/{name}', pathParameters: { name: SIMULATOR_ADAPTER }, body: { type: 'nso', baseUrl: services.simulator.url, auth: { type: 'basic', ...services.simulatorCredentials } } }) }, 0);
const variants: ColdVariant[] = [
  { name: 'bare', kind: 'reference', file: fixtures.bare.file, environment: getTreeEnv, event: (r) => firstCallEvent('getTree', ctx(r)), timeoutSeconds: 10 },
  { name: 'sdk-only', kind: 'reference', file: fixtures.sdkOnly.file, environment: getTreeEnv, event: (r) => firstCallEvent('getTree', ctx(r)), timeoutSeconds: 10 },
  //{ name: 'lith', kind: 'lith', file: fixtures.lith.file, environment: { ...relayEnv, ...getTreeEnv }, event: (r) => firstCallEvent('getTree', ctx(r)), timeoutSeconds: 10 },
  fnVariant('authorizer/handler'), { ...fnVariant('authorizer/handler'), name: 'raw-auth', file: raw.file },
];
const res = await measureCold({ node, child, variants, rounds: Number(process.argv[2] ?? 8) });
for (const [name, s] of res) {
  const f = (k: keyof typeof s[0]) => { const x = summarize(s.map((v) => v[k] as number)); return `${k} ${x.p50.toFixed(1)}/${x.p90.toFixed(1)}`; };
  console.log(name.padEnd(18), f('boot'), f('init'), f('first'), f('total'), f('cpu'));
}
await services.stop();
