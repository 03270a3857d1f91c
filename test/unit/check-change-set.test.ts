/**
 * The pipeline's approval gate (tools/deploy/check-change-set.ts) over change sets as
 * `aws cloudformation describe-change-set --output json` prints them: a release of the API
 * (with its nested stack's change set) passes; replacing, removing or overwriting stateful
 * resources fails, each named; a nested change set left out makes the input unusable.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { type ChangeSetDescription, checkChangeSets } from '../../tools/deploy/check-change-set.js';

const DIR = path.join(PROJECT_ROOT, 'test', 'unit', 'fixtures', 'change-sets');
const fixture = (name: string): ChangeSetDescription => JSON.parse(readFileSync(path.join(DIR, `${name}.json`), 'utf8'));

describe('the change-set check', () => {
  it('passes a release that updates functions, an alias and a log group in place, across the nested stack', () => {
    expect(checkChangeSets([fixture('api-release'), fixture('api-release-orch-manager')])).toEqual({ findings: [], unusable: [], allowed: [] });
  });

  it('cannot judge a release whose nested stack’s change set is missing', () => {
    const { unusable } = checkChangeSets([fixture('api-release')]);
    expect(unusable).toEqual([
      expect.stringMatching(/^NetconfigProdApi\/OrchManagerNestedStack\S+: its nested change set arn:aws:cloudformation:\S+ was not given$/),
    ]);
  });

  it('names each stateful resource replaced, possibly replaced, removed or overwritten', () => {
    expect(checkChangeSets([fixture('data-risky')]).findings).toEqual([
      'NetconfigProd/TreesTable484BD673 (AWS::DynamoDB::GlobalTable): replaced (a new resource, the old one deleted)',
      'NetconfigProd/AuthUsersE210B9B0 (AWS::Cognito::UserPool): may be replaced (Replacement: Conditional)',
      'NetconfigProd/SecretsVaultReaderCredentials706FF851 (AWS::SecretsManager::Secret): its value overwritten (SecretString or GenerateSecretString changed)',
      'NetconfigProd/AuthGroupapiread99778442 (AWS::Cognito::UserPoolGroup): removed from the stack',
    ]);
  });

  it('lets a reviewed change through by stack and logical id, and lists it', () => {
    const result = checkChangeSets(
      [fixture('data-risky')],
      new Set(['NetconfigProd/AuthGroupapiread99778442', 'NetconfigProd/SecretsVaultReaderCredentials706FF851']),
    );
    expect(result.findings).toHaveLength(2);
    expect(result.allowed).toEqual([expect.stringMatching(/SecretsVaultReaderCredentials/), expect.stringMatching(/AuthGroupapiread/)]);
  });

  it('passes a change set that failed only because nothing changed, refuses other failures and partial pages', () => {
    expect(checkChangeSets([fixture('data-unchanged')])).toEqual({ findings: [], unusable: [], allowed: [] });
    const failed = { ...fixture('data-unchanged'), StatusReason: 'Template error: unresolved resource dependencies' };
    expect(checkChangeSets([failed]).unusable).toEqual(['NetconfigProd: the change set failed (Template error: unresolved resource dependencies)']);
    expect(checkChangeSets([{ ...fixture('api-release-orch-manager'), NextToken: 'abc' }]).unusable).toEqual([
      expect.stringMatching(/has more pages \(NextToken\)/),
    ]);
    expect(checkChangeSets([{ Stacks: [] } as ChangeSetDescription]).unusable).toEqual([expect.stringMatching(/^change set 1: not the output of/)]);
  });

  it('exits 1 on findings, 2 on unusable input, 0 when clear (the command the pipeline runs)', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'tools/deploy/check-change-set.ts'), ...args], { encoding: 'utf8' });
    const clear = run(path.join(DIR, 'api-release.json'), path.join(DIR, 'api-release-orch-manager.json'));
    expect([clear.status, clear.stdout]).toEqual([0, '2 change set(s) checked: no stateful resource replaced, removed or overwritten\n']);
    const risky = run('--allow', 'NetconfigProd/AuthGroupapiread99778442', path.join(DIR, 'data-risky.json'));
    expect(risky.status).toBe(1);
    expect(risky.stderr).toContain('stateful: NetconfigProd/TreesTable484BD673');
    expect(risky.stderr).toContain('3 stateful resource(s) at risk');
    expect(run(path.join(DIR, 'api-release.json')).status).toBe(2);
  });
});
