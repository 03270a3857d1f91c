/**
 * The approval gate of the deployment pipeline (docs/deployment.md, "Pipeline"): reads the
 * change sets `cdk deploy --method=prepare-change-set` created, as
 * `aws cloudformation describe-change-set --output json` printed them (the root stack's and
 * each nested stack's), and fails when one would replace or delete a stateful resource, or
 * overwrite a secret's value. Nothing is executed here: a pipeline runs it, then asks for
 * approval, then executes the change sets.
 *
 *   tsx tools/deploy/check-change-set.ts [--allow <Stack>/<LogicalId>]... <change-set.json>...
 *
 * Exit 0: nothing stateful at risk. Exit 1: findings (printed). Exit 2: the input is unusable
 * (not a change set, a page missing, a nested stack's change set not given).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/**
 * Resource types whose replacement or removal loses data or identity: the tables (items), the
 * user pool, its client (the tokens' audience) and groups (memberships), the secrets (values set
 * by hand), the KMS keys (what they encrypted), the backup vault (the backups), and the log
 * groups (the audit trail: a removed route's group goes only after review, with --allow).
 */
export const STATEFUL_TYPES: ReadonlySet<string> = new Set([
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::Cognito::UserPool',
  'AWS::Cognito::UserPoolClient',
  'AWS::Cognito::UserPoolGroup',
  'AWS::SecretsManager::Secret',
  'AWS::KMS::Key',
  'AWS::Backup::BackupVault',
  'AWS::Logs::LogGroup',
]);

/** The properties of a secret whose change writes a new value over the one set by hand. */
const SECRET_VALUE_PROPERTIES = new Set(['SecretString', 'GenerateSecretString']);

interface ResourceChange {
  readonly Action?: string;
  readonly LogicalResourceId?: string;
  readonly ResourceType?: string;
  readonly Replacement?: string;
  readonly ChangeSetId?: string;
  readonly Details?: readonly { readonly Target?: { readonly Attribute?: string; readonly Name?: string } }[];
}

/** The part of `describe-change-set`'s output the check reads. */
export interface ChangeSetDescription {
  readonly ChangeSetId?: string;
  readonly StackName?: string;
  readonly Status?: string;
  readonly StatusReason?: string;
  readonly NextToken?: string;
  readonly Changes?: readonly { readonly Type?: string; readonly ResourceChange?: ResourceChange }[];
}

export interface CheckResult {
  /** Stateful resources at risk, one line each. */
  readonly findings: readonly string[];
  /** Why the input cannot be judged (the check fails on these too). */
  readonly unusable: readonly string[];
  /** Changes to stateful resources that were allowed by name. */
  readonly allowed: readonly string[];
}

/** Why a change puts a stateful resource at risk, or none. */
export const riskOf = (change: ResourceChange): string | undefined => {
  if (!change.ResourceType || !STATEFUL_TYPES.has(change.ResourceType)) return undefined;
  switch (change.Action) {
    case 'Remove':
      return 'removed from the stack';
    case 'Dynamic':
      return 'changes only known at execution (Dynamic): replacement cannot be ruled out';
    case 'Modify':
      if (change.Replacement === 'True') return 'replaced (a new resource, the old one deleted)';
      if (change.Replacement === 'Conditional') return 'may be replaced (Replacement: Conditional)';
      if (change.ResourceType === 'AWS::SecretsManager::Secret' && change.Details?.some((d) => SECRET_VALUE_PROPERTIES.has(d.Target?.Name ?? '')))
        return 'its value overwritten (SecretString or GenerateSecretString changed)';
      return undefined;
    default:
      return undefined;
  }
};

const NO_CHANGES = /didn't contain changes|No updates are to be performed/;

/** Checks the change sets of one deployment: the root stacks' and every nested stack's they refer to. */
export const checkChangeSets = (changeSets: readonly ChangeSetDescription[], allow: ReadonlySet<string> = new Set()): CheckResult => {
  const findings: string[] = [];
  const unusable: string[] = [];
  const allowed: string[] = [];
  const given = new Set(changeSets.map((c) => c.ChangeSetId).filter(Boolean));
  for (const [i, changeSet] of changeSets.entries()) {
    const stack = changeSet.StackName ?? `change set ${i + 1}`;
    if (!changeSet.StackName || !Array.isArray(changeSet.Changes)) {
      unusable.push(`${stack}: not the output of aws cloudformation describe-change-set --output json (no StackName or Changes)`);
      continue;
    }
    if (changeSet.NextToken) unusable.push(`${stack}: the description has more pages (NextToken): describe it with pagination on`);
    if (changeSet.Status === 'FAILED' && !NO_CHANGES.test(changeSet.StatusReason ?? ''))
      unusable.push(`${stack}: the change set failed (${changeSet.StatusReason ?? 'no reason given'})`);
    for (const { Type, ResourceChange: change } of changeSet.Changes) {
      if (Type !== 'Resource' || !change) continue;
      if (change.ResourceType === 'AWS::CloudFormation::Stack' && change.ChangeSetId && !given.has(change.ChangeSetId))
        unusable.push(`${stack}/${change.LogicalResourceId}: its nested change set ${change.ChangeSetId} was not given`);
      const risk = riskOf(change);
      if (!risk) continue;
      const name = `${stack}/${change.LogicalResourceId} (${change.ResourceType})`;
      if (allow.has(`${stack}/${change.LogicalResourceId}`)) allowed.push(`${name}: ${risk}`);
      else findings.push(`${name}: ${risk}`);
    }
  }
  return { findings, unusable, allowed };
};

const main = (argv: readonly string[]): number => {
  const { values, positionals } = parseArgs({ args: [...argv], options: { allow: { type: 'string', multiple: true } }, allowPositionals: true });
  if (positionals.length === 0) {
    process.stderr.write('usage: check-change-set.ts [--allow <Stack>/<LogicalId>]... <change-set.json>...\n');
    return 2;
  }
  const changeSets: ChangeSetDescription[] = [];
  for (const file of positionals) {
    try {
      changeSets.push(JSON.parse(readFileSync(file, 'utf8')) as ChangeSetDescription);
    } catch (error) {
      process.stderr.write(`${file}: ${(error as Error).message}\n`);
      return 2;
    }
  }
  const { findings, unusable, allowed } = checkChangeSets(changeSets, new Set(values.allow ?? []));
  for (const line of allowed) process.stdout.write(`allowed: ${line}\n`);
  for (const line of unusable) process.stderr.write(`cannot check: ${line}\n`);
  for (const line of findings) process.stderr.write(`stateful: ${line}\n`);
  if (unusable.length) return 2;
  if (findings.length) {
    process.stderr.write(`${findings.length} stateful resource(s) at risk: do not execute (docs/deployment.md, "Pipeline")\n`);
    return 1;
  }
  process.stdout.write(`${changeSets.length} change set(s) checked: no stateful resource replaced, removed or overwritten\n`);
  return 0;
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));
