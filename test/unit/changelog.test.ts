/** The changelog's pure parts: the field-level diff and the transaction's Put of an entry. */
import { describe, expect, it } from 'vitest';
import { changelogKey, changelogPut, diffFields } from '../../functions/runtime/changelog.js';

describe('diffFields', () => {
  it('lists every field of a creation with `to` only, and of a deletion with `from` only, sorted by field', () => {
    const record = { type: 'nso', auth: { type: 'basic', username: 'u', password: '$VAULT_a#password' }, timeoutMs: 10 };
    expect(diffFields(undefined, record)).toEqual([
      { field: 'auth.password', to: '$VAULT_a#password' },
      { field: 'auth.type', to: 'basic' },
      { field: 'auth.username', to: 'u' },
      { field: 'timeoutMs', to: 10 },
      { field: 'type', to: 'nso' },
    ]);
    expect(diffFields(record, undefined).map((c) => Object.keys(c).sort().join())).toEqual(Array(5).fill('field,from'));
  });

  it('names only the fields that changed, nested ones by their dotted path, arrays as whole values', () => {
    const before = { a: 1, nested: { x: 'same', y: 'old' }, list: [1, 2], gone: true };
    const after = { a: 1, nested: { x: 'same', y: 'new' }, list: [1, 2, 3], added: 'yes' };
    expect(diffFields(before, after)).toEqual([
      { field: 'added', to: 'yes' },
      { field: 'gone', from: true },
      { field: 'list', from: [1, 2], to: [1, 2, 3] },
      { field: 'nested.y', from: 'old', to: 'new' },
    ]);
    expect(diffFields(before, structuredClone(before))).toEqual([]);
  });

  it('shows a secret field only as its $VAULT_ reference, anything else in it as [redacted]', () => {
    const changes = diffFields(
      { auth: { password: '$VAULT_netconfig/adapters/x/v1#password' }, apiToken: 'plain-token', settings: { secretKey: { inner: 'x' } } },
      { auth: { password: 'Plain-Pa55' }, apiToken: '$VAULT_team/t#token', settings: { secretKey: 42 } },
    );
    expect(changes).toEqual([
      { field: 'apiToken', from: '[redacted]', to: '$VAULT_team/t#token' },
      { field: 'auth.password', from: '$VAULT_netconfig/adapters/x/v1#password', to: '[redacted]' },
      { field: 'settings.secretKey', from: '[redacted]', to: '[redacted]' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/Plain-Pa55|plain-token|inner|42/);
  });
});

describe('changelogPut', () => {
  it('puts the entry under its subject, sorted by time, and never over another entry', () => {
    const at = '2026-01-02T03:04:05.678Z';
    const one = changelogPut({ kind: 'adapter', name: 'lab', at, by: 'ops', action: 'created', changes: [{ field: 'a', to: 1 }] }, 'table');
    const two = changelogPut({ kind: 'adapter', name: 'lab', at, by: 'ops', action: 'stopped' }, 'table');
    expect(one.Put).toMatchObject({
      TableName: 'table',
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: { pk: changelogKey('adapter', 'lab'), kind: 'adapter', name: 'lab', at, by: 'ops', action: 'created', changes: [{ field: 'a', to: 1 }] },
    });
    expect(two.Put.Item['changes']).toEqual([]);
    // The same millisecond: the later entry of this container sorts after the earlier one.
    expect(String(one.Put.Item['sk']).startsWith(`${at}#`)).toBe(true);
    expect(String(two.Put.Item['sk']) > String(one.Put.Item['sk'])).toBe(true);
    expect(changelogKey('application', 'orch_manager')).toBe('application#orch_manager');
  });

  it('refuses a time that is not Date#toISOString (entries sort by it)', () => {
    expect(() => changelogPut({ kind: 'adapter', name: 'lab', at: '2026-01-02 03:04:05', by: 'ops', action: 'created' }, 'table')).toThrow(/ISO time/);
  });
});
