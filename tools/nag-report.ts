/**
 * cdk-nag findings, resources and synth time of the stacks of one or more deployment configs:
 * `npx tsx tools/nag-report.ts deploy/config.example.json deploy/config.private.example.json`.
 *
 * Per config it prints, for each pack (AwsSolutions, NIST 800-53 R5, PCI DSS 3.2.1,
 * Serverless), the errors and warnings left open and those suppressed (infra/nag.ts); the
 * resources of each stack, nested stacks included; and the synth time of the stacks alone
 * (construction and synthesis, assets not bundled, no cdk-nag), the median of three runs.
 */
import { App, Aspects, NestedStack, type Stack, type IAspect } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NagMessageLevel, NIST80053R5Checks, PCIDSS321Checks, ServerlessChecks, type INagLogger, type NagPack } from 'cdk-nag';
import type { NagLoggerNonComplianceData } from 'cdk-nag/lib/nag-logger.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadDeployConfig } from '../infra/config.js';
import { addNagSuppressions } from '../infra/nag.js';
import { NetconfigService } from '../infra/stack.js';
import { appContext } from '../infra/app-context.js';

/** The packs measured, by the name cdk-nag gives their findings. */
export const NAG_PACKS: Readonly<Record<string, (props: ConstructorParameters<typeof AwsSolutionsChecks>[0]) => NagPack>> = {
  AwsSolutions: (props) => new AwsSolutionsChecks(props),
  'NIST.800.53.R5': (props) => new NIST80053R5Checks(props),
  'PCI.DSS.321': (props) => new PCIDSS321Checks(props),
  Serverless: (props) => new ServerlessChecks(props),
};

/** Errors and warnings of one pack: left open, and suppressed. */
export interface PackFindings {
  open: number;
  suppressed: number;
  /** Open findings by rule, e.g. `{ 'NIST.800.53.R5-LambdaInsideVPC': 44 }`. */
  openByRule: Record<string, number>;
}

/** A cdk-nag logger that counts errors and warnings per pack (informational findings are not counted). */
class Tally implements INagLogger {
  readonly packs: Record<string, PackFindings> = {};
  #pack(data: NagLoggerNonComplianceData): PackFindings | undefined {
    if (data.ruleLevel === NagMessageLevel.INFO) return undefined;
    return (this.packs[data.nagPackName] ??= { open: 0, suppressed: 0, openByRule: {} });
  }
  onNonCompliance(data: NagLoggerNonComplianceData): void {
    const pack = this.#pack(data);
    if (!pack) return;
    pack.open++;
    pack.openByRule[data.ruleId] = (pack.openByRule[data.ruleId] ?? 0) + 1;
  }
  onSuppressed(data: NagLoggerNonComplianceData): void {
    const pack = this.#pack(data);
    if (pack) pack.suppressed++;
  }
  onError(): void {}
  onSuppressedError(): void {}
  onCompliance(): void {}
  onNotApplicable(): void {}
}

const build = (configFile: string, aspects: (app: App) => IAspect[] = () => []) => {
  const { stackName, ...settings } = loadDeployConfig(configFile);
  const app = new App({ context: { ...appContext(), 'aws:cdk:bundling-stacks': [] } });
  const service = new NetconfigService(app, stackName, { settings });
  addNagSuppressions(service);
  for (const aspect of aspects(app)) Aspects.of(app).add(aspect);
  return { app, service };
};

/** The findings per pack of the stacks of one config (every stack, nested ones included). */
export const nagFindings = (configFile: string): Record<string, PackFindings> => {
  const tally = new Tally();
  const { app } = build(configFile, () => Object.values(NAG_PACKS).map((pack) => pack({ additionalLoggers: [tally] })));
  app.synth();
  return Object.fromEntries(Object.keys(NAG_PACKS).map((name) => [name, tally.packs[name] ?? { open: 0, suppressed: 0, openByRule: {} }]));
};

/** Resources per stack (the stack's own; nested stacks listed by their part name) and the synth time in ms. */
export const stackFigures = (configFile: string): { resources: Record<string, number>; synthMs: number } => {
  const runs: number[] = [];
  let resources: Record<string, number> = {};
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    const { app, service } = build(configFile);
    const assembly = app.synth();
    runs.push(performance.now() - start);
    const count = (stack: Stack) => {
      const file = path.join(assembly.directory, stack.templateFile);
      return Object.keys(JSON.parse(readFileSync(file, 'utf8')).Resources ?? {}).length;
    };
    resources = Object.fromEntries(service.stacks.map((s) => [s instanceof NestedStack ? `  ${s.node.id} (nested)` : s.stackName, count(s)]));
  }
  return { resources, synthMs: Math.round(runs.sort((a, b) => a - b)[1]!) };
};

const table = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
};

const main = (files: string[]) => {
  if (!files.length) {
    process.stderr.write('usage: npx tsx tools/nag-report.ts <config.json>...\n');
    process.exit(2);
  }
  for (const file of files) {
    const findings = nagFindings(file);
    const { resources, synthMs } = stackFigures(file);
    const lines = [
      `# ${file}`,
      '',
      table([['pack', 'open', 'suppressed'], ...Object.entries(findings).map(([name, f]) => [name, String(f.open), String(f.suppressed)])]),
      '',
      table([['stack', 'resources'], ...Object.entries(resources).map(([name, n]) => [name, String(n)])]),
      '',
      `synth: ${synthMs} ms (median of 3, assets not bundled, without cdk-nag)`,
      '',
      'open findings by rule:',
      ...Object.values(findings).flatMap((f) =>
        Object.entries(f.openByRule)
          .sort()
          .map(([rule, n]) => `  ${rule}: ${n}`),
      ),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
};

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
