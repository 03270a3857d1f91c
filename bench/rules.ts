/**
 * Rules section of `npm run bench` (also `npx tsx bench/rules.ts [rounds]`): how long the
 * evaluator takes for one device, the figure a compliance batch pays per device on top of the
 * fetch. Each workload is built so that every expected list entry has to be searched for
 * through the whole list (entries sit at the list's end), the slowest shape containment has:
 *
 * - `keyed`: list entries with a unique `name` (a YANG list key), expected entries naming it;
 * - `leaf-list`: a list of numbers, expected numbers at its end;
 * - `deep`: entries alike but for one leaf four levels down, as NSO lists interfaces
 *   (`ip/address/primary/address`), expected entries naming only that leaf;
 * - `pairs`: entries made of two small members and no unique one, so no expected entry has
 *   a value few entries share (the evaluator's slowest case: see docs/compliance.md).
 *
 * Sizes: a 0.8 KB rule against a 200 KB configuration, measured beside the straightforward
 * evaluator the property test holds (tools/rules-reference.ts); and the worst case the
 * limits allow: one version's whole rule budget (`versionBytes`, in rules of `ruleValueBytes`)
 * against a 200 KB configuration and against the largest the relay reads (`maxBodyBytes`).
 *
 * `pattern`: a `pattern` rule whose expression takes a backtracking engine exponential time
 * ({@link PATHOLOGICAL_PATTERN}, against a run of `a` ended by `!`), over a configuration
 * leaf of 50, 100 and 200 KB: user patterns run on RE2 (functions/platform/re2.ts), so the
 * time per KB stays flat (target: at 200 KB at most twice that at 50 KB).
 */
import { pathToFileURL } from 'node:url';
import { DEFAULT_LIMITS } from '../functions/relay/service.js';
import type { JsonValue, Rule } from '../functions/trees/config-model.js';
import { CONFIG_LIMITS } from '../functions/trees/config-checks.js';
import { evaluateRules } from '../functions/trees/rules.js';
import { referenceEvaluateRules } from '../tools/rules-reference.js';
import { median } from './stats.js';

/** One measured case. */
export interface RulesRun {
  readonly workload: string;
  readonly evaluator: 'indexed' | 'straightforward';
  readonly ruleBytes: number;
  readonly rules: number;
  readonly configBytes: number;
  readonly p50Ms: number;
  readonly maxMs: number;
  readonly rounds: number;
}

type Entry = (i: number) => JsonValue;

/** The shapes measured: one list entry by its position. */
const WORKLOADS: Record<string, Entry> = {
  keyed: (i) => ({ name: `GigabitEthernet0/${i}`, description: 'access port', 'switchport-mode': 'access', vlan: i % 4094 }),
  'leaf-list': (i) => i,
  deep: (i) => ({ ip: { address: { primary: { address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, mask: '255.255.255.0' } } }, mode: 'access' }),
  pairs: (i) => ({ a: i % 97, b: (i * 7) % 89 }),
};

type Interface = { ip: { address: { primary: { address: string } } } };

/** What a rule expects of an entry of each workload: the whole entry unless said here. */
const EXPECTED: Record<string, (entry: JsonValue) => JsonValue> = {
  deep: (entry) => {
    const { address } = (entry as Interface).ip.address.primary;
    return { ip: { address: { primary: { address } } } };
  },
};

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** A configuration whose list at `/list` holds entries until the whole is about `bytes`. */
const configOf = (entry: Entry, bytes: number): { config: { list: JsonValue[] }; size: number } => {
  const list: JsonValue[] = [];
  let size = 10;
  for (let i = 0; size < bytes; i++) {
    const e = entry(i);
    list.push(e);
    size += bytesOf(e) + 1;
  }
  return { config: { list }, size };
};

/**
 * `count` rules at `/list`, each a `required` list of up to `valueBytes` of the list's last
 * entries, or of the `part` of each a rule expects (so each one is found, and found last): the
 * rules pass, after the longest search.
 */
const rulesOf = (list: readonly JsonValue[], part: (entry: JsonValue) => JsonValue, valueBytes: number, count: number): Rule[] => {
  const rules: Rule[] = [];
  let from = list.length;
  for (let r = 0; r < count; r++) {
    const value: JsonValue[] = [];
    let size = 2;
    while (from > 0) {
      const e = part(list[from - 1]!);
      if (size + bytesOf(e) + 1 > valueBytes) break;
      value.push(e);
      size += bytesOf(e) + 1;
      from--;
    }
    rules.push({ id: `r${r}`, path: '/list', mode: 'required', severity: 'error', value });
  }
  return rules;
};

type Evaluate = (config: unknown, variables: Readonly<Record<string, string>>, rules: readonly Rule[]) => readonly { status: string }[];

const time = (evaluate: Evaluate, config: unknown, rules: readonly Rule[], rounds: number): { p50: number; max: number } => {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const results = evaluate(config, {}, rules);
    times.push(performance.now() - started);
    if (results.some((r) => r.status !== 'pass')) throw new Error('bench: a rule meant to pass did not');
  }
  return { p50: median(times), max: Math.max(...times) };
};

/** Rules that one version can hold at most, each of the largest value. */
const RULES_AT_LIMIT = Math.floor(CONFIG_LIMITS.versionBytes / CONFIG_LIMITS.ruleValueBytes);

/** Measures every workload; `rounds` evaluations per case (the straightforward evaluator once). */
export const measureRules = (rounds: number, log: (line: string) => void = () => {}): RulesRun[] => {
  const runs: RulesRun[] = [];
  const cases = [
    { ruleBytes: 800, rules: 1, configBytes: 200_000, reference: true },
    { ruleBytes: CONFIG_LIMITS.ruleValueBytes, rules: RULES_AT_LIMIT, configBytes: 200_000, reference: false },
    { ruleBytes: CONFIG_LIMITS.ruleValueBytes, rules: RULES_AT_LIMIT, configBytes: DEFAULT_LIMITS.maxBodyBytes, reference: false },
  ];
  for (const [workload, entry] of Object.entries(WORKLOADS)) {
    for (const c of cases) {
      const { config, size } = configOf(entry, c.configBytes);
      const rules = rulesOf(config.list, EXPECTED[workload] ?? ((e) => e), c.ruleBytes, c.rules);
      const ruleBytes = rules.reduce((sum, r) => sum + bytesOf(r.value), 0);
      const evaluators: [RulesRun['evaluator'], Evaluate, number][] = [['indexed', evaluateRules, rounds]];
      if (c.reference) evaluators.push(['straightforward', referenceEvaluateRules, 1]);
      for (const [evaluator, evaluate, n] of evaluators) {
        const t = time(evaluate, config, rules, n);
        const run = { workload, evaluator, ruleBytes, rules: rules.length, configBytes: size, p50Ms: round1(t.p50), maxMs: round1(t.max), rounds: n };
        log(`rules: ${workload} ${evaluator}, ${rules.length} rule(s) of ${ruleBytes} B against ${size} B: p50 ${run.p50Ms} ms`);
        runs.push(run);
      }
    }
  }
  return runs;
};

const round1 = (v: number): number => Math.round(v * 10) / 10;

/** One size of the pathological-pattern workload. */
export interface PatternRun {
  readonly pattern: string;
  /** Characters of the leaf the pattern runs over. */
  readonly valueBytes: number;
  readonly configBytes: number;
  readonly p50Ms: number;
  /** `p50Ms` per KB (1,000 bytes) of the leaf. */
  readonly msPerKb: number;
  readonly rounds: number;
}

/** Nested quantifiers: a backtracking engine tries every way to split the run of `a` before it fails. */
export const PATHOLOGICAL_PATTERN = '^(a+)+$';
/** The leaf sizes measured, in bytes. */
export const PATTERN_SIZES = [50_000, 100_000, 200_000] as const;

/** Unrecorded passes over every size before the measured ones: the first evaluations run before the JIT has compiled RE2JS. */
const PATTERN_WARMUP = 3;

/**
 * Times one `pattern` rule with {@link PATHOLOGICAL_PATTERN} through `evaluateRules` over a
 * banner of each of {@link PATTERN_SIZES} (`a` repeated, then `!`, so the pattern never
 * matches: the case that backtracks longest). After {@link PATTERN_WARMUP} passes over every
 * size, `rounds` passes each evaluate every size once, so the sizes share the machine's state.
 */
export const measurePathologicalPattern = (rounds: number, log: (line: string) => void = () => {}): PatternRun[] => {
  const rules: Rule[] = [{ id: 'motd-pattern', path: '/tailf-ned-cisco-ios:banner/motd', mode: 'required', severity: 'info', pattern: PATHOLOGICAL_PATTERN }];
  const configs = PATTERN_SIZES.map((valueBytes) => ({
    'tailf-ned-cisco-ios:hostname': 'edge-00000',
    'tailf-ned-cisco-ios:banner': { motd: `${'a'.repeat(valueBytes - 1)}!` },
  }));
  const times: number[][] = PATTERN_SIZES.map(() => []);
  for (let pass = 0; pass < PATTERN_WARMUP + rounds; pass++) {
    configs.forEach((config, i) => {
      const started = performance.now();
      const [result] = evaluateRules(config, {}, rules);
      if (pass >= PATTERN_WARMUP) times[i]!.push(performance.now() - started);
      if (result?.status !== 'fail') throw new Error(`bench: the pathological pattern ${result?.status === 'pass' ? 'matched' : 'was invalid'}`);
    });
  }
  return PATTERN_SIZES.map((valueBytes, i) => {
    const p50 = median(times[i]!);
    const run = {
      pattern: PATHOLOGICAL_PATTERN,
      valueBytes,
      configBytes: bytesOf(configs[i]),
      p50Ms: round2(p50),
      msPerKb: Math.round((p50 / (valueBytes / 1000)) * 1000) / 1000,
      rounds,
    };
    log(`rules: pattern ${PATHOLOGICAL_PATTERN} over ${valueBytes} B: p50 ${run.p50Ms} ms, ${run.msPerKb} ms/KB`);
    return run;
  });
};

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** The time per KB at the largest size over that at the smallest: about 1 in linear time, far above in exponential. */
export const patternGrowth = (runs: readonly PatternRun[]): number | undefined => {
  const sizes = [...runs].sort((a, b) => a.valueBytes - b.valueBytes);
  const first = sizes[0];
  const last = sizes.at(-1);
  if (!first || !last || first === last || first.p50Ms <= 0) return undefined;
  return last.p50Ms / last.valueBytes / (first.p50Ms / first.valueBytes);
};

/** The last line a run prints: what `bench/run.ts` reads back. */
export const RULES_RESULT_PREFIX = 'RULES_RESULT ';
/** The line with the pathological-pattern runs. */
export const PATTERN_RESULT_PREFIX = 'PATTERN_RESULT ';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const rounds = Number(process.argv[2] ?? 5);
  const runs = measureRules(rounds, (line) => console.error(line));
  const patterns = measurePathologicalPattern(rounds, (line) => console.error(line));
  console.error(`rules: pattern time per KB at ${PATTERN_SIZES.at(-1)} B / at ${PATTERN_SIZES[0]} B: ${patternGrowth(patterns)?.toFixed(2)}`);
  console.log(`${RULES_RESULT_PREFIX}${JSON.stringify(runs)}`);
  console.log(`${PATTERN_RESULT_PREFIX}${JSON.stringify(patterns)}`);
}
