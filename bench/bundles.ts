/**
 * Measurement 1: what is in each bundle, from esbuild's metafile of the byte-identical rebuild:
 * its size, the bytes per package, and whether Ajv's schema compiler is in it at all (schemas are
 * compiled at build time into `functions/generated/validators.js`; only Ajv's small run-time
 * helpers belong in a bundle).
 */
import type { Metafile } from 'esbuild';

/** Where an input file comes from: the npm package, or the project's own code. */
export const packageOf = (input: string): string => {
  // The innermost node_modules names the package (pnpm and nested installs have several).
  const at = input.lastIndexOf('node_modules/');
  const match = at < 0 ? null : /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input.slice(at));
  if (match) return match[1]!;
  if (input.startsWith('functions/generated/')) return '(generated validators)';
  if (input.startsWith('functions/') || input.startsWith('infra/') || input.startsWith('bench/')) return '(this project)';
  return '(other)';
};

/** Modules of Ajv that compile schemas (present only when something can compile at run time). */
const AJV_COMPILER = /(?:^|\/)node_modules\/ajv\/dist\/(?:core|ajv|2019|2020|jtd)\.js$|(?:^|\/)node_modules\/ajv\/dist\/compile\/index\.js$/;

export interface BundleContents {
  readonly outputBytes: number;
  /** Bytes in the output per package, largest first. */
  readonly packages: readonly { readonly name: string; readonly bytes: number }[];
  /** Ajv compiler modules in the bundle (should be none). */
  readonly ajvCompilerModules: readonly string[];
  /** Ajv modules in the bundle (run-time helpers such as `ucs2length` are expected). */
  readonly ajvModules: readonly string[];
}

/** Reads one output of a metafile (the only one of a function's build). */
export const bundleContents = (metafile: Metafile): BundleContents => {
  const [output] = Object.values(metafile.outputs);
  if (!output) throw new Error('the metafile has no output');
  const perPackage = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    perPackage.set(name, (perPackage.get(name) ?? 0) + bytesInOutput);
  }
  const inputs = Object.keys(output.inputs);
  return {
    outputBytes: output.bytes,
    packages: [...perPackage].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes),
    ajvCompilerModules: inputs.filter((i) => AJV_COMPILER.test(i)),
    ajvModules: inputs.filter((i) => packageOf(i) === 'ajv'),
  };
};

/** The bytes of the AWS SDK (`@aws-sdk/*`, `@smithy/*`, `@aws-crypto/*`…) in a bundle. */
export const sdkBytes = (contents: BundleContents): number =>
  contents.packages
    .filter((p) => /^@(aws-sdk|smithy|aws-crypto|aws)\//.test(p.name) || p.name === 'fast-xml-parser' || p.name === 'tslib')
    .reduce((sum, p) => sum + p.bytes, 0);
