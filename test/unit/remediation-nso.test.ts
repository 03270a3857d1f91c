import { describe, expect, it } from 'vitest';
import { checkRelayPath } from '../../functions/outbound/target.js';
import { commitQuery, commitText, MAX_COMMIT_TEXT } from '../../functions/remediation/nso.js';
import { commitParameters } from '../../tools/simulators/nso-transactions.js';

describe('commit parameters', () => {
  const params = [
    ['rollback-id', 'true'],
    ['rollback-label', 'remediation-ab-edge.lab'],
    ['rollback-comment', 'by alice/ops, batch=b1 & more'],
  ] as const;

  it('are separate query parameters in the classic form, one params value in NSO 6.7 form', () => {
    expect(commitQuery('query', params)).toBe(
      '?rollback-id=true&rollback-label=remediation-ab-edge.lab&rollback-comment=by%20alice/ops%2C%20batch%3Db1%20%26%20more',
    );
    expect(commitQuery('params', params)).toBe(
      '?params=rollback-id=true,rollback-label=remediation-ab-edge.lab,rollback-comment=by%20alice/ops%2C%20batch%3Db1%20%26%20more',
    );
    expect(commitQuery('query', [])).toBe('');
  });

  it('pass the relay path check, and read back the same in either form', () => {
    for (const form of ['query', 'params'] as const) {
      const query = commitQuery(form, params);
      expect(checkRelayPath(`/restconf/data${query}`)).toBeUndefined();
      expect(Object.fromEntries(commitParameters(query))).toEqual(Object.fromEntries(params));
    }
  });

  it('the simulator refuses params mixed with other parameters, unknown and repeated ones', () => {
    expect(() => commitParameters('?params=dry-run=native&rollback-id=true')).toThrow('params cannot be combined');
    expect(() => commitParameters('?depth=1')).toThrow('unknown query parameter depth');
    expect(() => commitParameters('?params=dry-run=native,dry-run=cli')).toThrow('dry-run given twice');
  });
});

describe('label and comment text', () => {
  it('replaces what the relay refuses even encoded, and cuts to the bound', () => {
    expect(commitText('a%b\\c\nd\u0000e')).toBe('a_b_c_d_e');
    expect(commitText('lone \uD800 surrogate')).toBe('lone _ surrogate');
    expect(commitText('x'.repeat(MAX_COMMIT_TEXT + 10))).toHaveLength(MAX_COMMIT_TEXT);
    expect(commitText(`${'x'.repeat(MAX_COMMIT_TEXT - 1)}😀`)).toBe('x'.repeat(MAX_COMMIT_TEXT - 1));
    expect(checkRelayPath(`/restconf/data${commitQuery('query', [['rollback-comment', commitText('100% done \\o/ #1 @ops')]])}`)).toBeUndefined();
  });
});
