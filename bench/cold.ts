/**
 * Cold init: each variant (a function of the stack, a reference bundle, the Lambda-lith) is
 * started in a fresh `node` process (Node 22 from `node_modules/.bin`) that imports its bundle
 * and makes its first call (`cold-child.ts`). Variants run in alternation, round by round, in
 * a rotating order, so that the machine's drift spreads over all of them alike.
 */
import { pathToFileURL } from 'node:url';
import { ChildFailed, runNode } from './child.js';
import { rotation } from './stats.js';

/** One thing started cold. */
export interface ColdVariant {
  readonly name: string;
  readonly kind: 'reference' | 'function' | 'lith';
  /** The bundle (`index.mjs`). */
  readonly file: string;
  readonly environment: Readonly<Record<string, string>>;
  /** The first call of round `round`. */
  readonly event: (round: number) => unknown;
  readonly timeoutSeconds: number;
  /** Whether the first call's HTTP status is the answer being measured; default any 2xx. */
  readonly accepts?: (status: number) => boolean;
}

/** One cold start, in milliseconds from the process's start (`performance.timeOrigin`). */
export interface ColdSample {
  /** Node's own start, up to the first line of the child script. */
  readonly boot: number;
  /** Loading and initializing the bundle (`import()`). */
  readonly init: number;
  /** The first call, from the handler's call to its answer. */
  readonly first: number;
  /** All of it: process start to the first answer. */
  readonly total: number;
  /** As the parent saw it: spawn to exit (includes fork/exec and exit). */
  readonly wall: number;
  /** CPU time (user + system, all threads) the process used up to the first answer: less sensitive to a busy machine than the times. */
  readonly cpu: number;
  readonly status: number | string;
}

/**
 * Starts one cold process and returns its figures; throws when the call failed or answered
 * with an error. `nodeArgs` go to node (e.g. `--cpu-prof`), before the child script.
 */
export const runCold = async (
  node: string,
  child: string,
  variant: ColdVariant,
  round: number,
  options: { nodeArgs?: readonly string[]; cwd?: string } = {},
): Promise<ColdSample> => {
  const event = Buffer.from(JSON.stringify(variant.event(round))).toString('base64url');
  const { result: r, wallMs } = await runNode<Omit<ColdSample, 'wall'> & { body?: string }>({
    node,
    args: [...(options.nodeArgs ?? []), child, pathToFileURL(variant.file).href, 'handler', event, String(variant.timeoutSeconds)],
    env: variant.environment,
    label: `${variant.name} (cold, round ${round})`,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const ok = typeof r.status === 'number' ? (variant.accepts ?? isSuccess)(r.status) : r.status === 'authorized';
  if (!ok) throw new ChildFailed(`${variant.name}: first call answered ${r.status} ${r.body ?? ''}`);
  return { boot: r.boot, init: r.init, first: r.first, total: r.total, cpu: r.cpu, wall: wallMs, status: r.status };
};

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

/**
 * `rounds` rounds; in each, every variant once, in the order rotated by the round number.
 */
export const measureCold = async (o: {
  node: string;
  child: string;
  variants: readonly ColdVariant[];
  rounds: number;
  onProgress?: (round: number) => void;
}): Promise<Map<string, ColdSample[]>> => {
  const samples = new Map<string, ColdSample[]>(o.variants.map((v) => [v.name, []]));
  for (let round = 0; round < o.rounds; round++) {
    for (const variant of rotation(o.variants, round)) {
      samples.get(variant.name)!.push(await runCold(o.node, o.child, variant, round));
    }
    o.onProgress?.(round);
  }
  return samples;
};

/**
 * Runs a variant once, untimed, counting the functions compiled from source text (the
 * `Function` constructor, which Ajv compiles schemas with) during its init and first call.
 */
export const probeCompilations = async (node: string, child: string, variant: ColdVariant, round: number): Promise<number> => {
  const event = Buffer.from(JSON.stringify(variant.event(round))).toString('base64url');
  const { result } = await runNode<{ compiledFunctions: number }>({
    node,
    args: [child, pathToFileURL(variant.file).href, 'handler', event, String(variant.timeoutSeconds), 'probe'],
    env: variant.environment,
    label: `${variant.name} (probe)`,
  });
  return result.compiledFunctions;
};
