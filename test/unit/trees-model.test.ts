import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTree as validateCreate } from '../../functions/generated/validators.js';
import { decodeCursor, encodeCursor } from '../../functions/trees/cursor.js';
import { LABEL_PATTERN_SOURCE, TREE_LIMITS, isIsoMillis, summaryProblems, type TreeSummary } from '../../functions/trees/model.js';
import { transientReason } from '../../functions/platform/transient.js';
import { nameLockItem, readTreeItem, treeItem } from '../../functions/trees/store.js';

const good: TreeSummary = {
  id: '5cb0a3b7e1c4f20012a9d3e1',
  name: 'core',
  deviceType: 'cisco-ios-xr',
  versions: ['initial', 'draft', '1', 'draft'],
  created: '2019-04-12T14:42:47.958Z',
  lastUpdated: '2019-04-12T14:42:47.958Z',
};

describe('isIsoMillis', () => {
  it.each(['2019-04-12T14:42:47.958Z', '2020-02-29T00:00:00.000Z', '1970-01-01T00:00:00.000Z'])('accepts %s', (s) => {
    expect(isIsoMillis(s)).toBe(true);
  });
  it.each([
    '2019-04-12T14:42:47Z',
    '2019-04-12T14:42:47.95Z',
    '2019-04-12T14:42:47.9580Z',
    '2019-04-12T14:42:47.958+00:00',
    '2019-04-12 14:42:47.958Z',
    '2019-02-29T00:00:00.000Z',
    '2019-04-12T24:00:00.000Z',
    1555080167958,
    null,
  ])('rejects %j', (s) => {
    expect(isIsoMillis(s)).toBe(false);
  });
});

describe('summaryProblems', () => {
  it('finds nothing wrong with a good summary, in both modes', () => {
    expect(summaryProblems(good, 'input')).toEqual([]);
    expect(summaryProblems({ ...good, description: 'd' }, 'stored')).toEqual([]);
  });

  it('names every missing field', () => {
    expect(summaryProblems({}, 'stored')).toEqual([
      'id is missing',
      'name is missing',
      'deviceType is missing',
      'versions is missing',
      'created is missing',
      'lastUpdated is missing',
    ]);
  });

  it('applies limits and forbids unknown properties only to input', () => {
    const long = { ...good, name: 'n'.repeat(TREE_LIMITS.name + 1), versions: ['x'.repeat(TREE_LIMITS.versionLabel + 1)], pk: 'TREE#x' };
    expect(summaryProblems(long, 'stored')).toEqual([]);
    expect(summaryProblems(long, 'input')).toEqual([
      `name is longer than ${TREE_LIMITS.name} characters`,
      `versions.0 is longer than ${TREE_LIMITS.versionLabel} characters`,
      'pk is not a tree summary field',
    ]);
  });

  it('rejects input that was updated before it was created', () => {
    expect(summaryProblems({ ...good, lastUpdated: '2019-04-12T14:42:47.957Z' }, 'input')).toEqual(['lastUpdated is before created']);
  });

  it('never echoes the offending value', () => {
    const secretish = 'hunter2-value';
    const problems = summaryProblems({ ...good, id: secretish, created: secretish, versions: [secretish, 1] }, 'input');
    expect(problems.join(' ')).not.toContain(secretish);
  });
});

describe('readTreeItem', () => {
  it('returns exactly the summary fields of a good item, never the key or kind', () => {
    const read = readTreeItem({ ...treeItem(good), futureAttribute: 1 });
    expect(read).toEqual({ ok: true, tree: good });
    if (read.ok) expect(Object.keys(read.tree)).toEqual(['id', 'name', 'deviceType', 'versions', 'created', 'lastUpdated']);
  });

  it('reports a damaged item with the id taken from its key', () => {
    const item = { ...treeItem(good), id: 7 };
    expect(readTreeItem(item)).toEqual({ ok: false, id: good.id, problems: ['id is not a string'] });
  });

  it('treats a name lock read as a tree as damaged', () => {
    const read = readTreeItem(nameLockItem('core', good.id));
    expect(read.ok).toBe(false);
  });
});

describe('the create schema and the seed rules agree', () => {
  it.each([
    ['a good name', 'core-router', true],
    ['a name with inner spaces', 'core router 1', true],
    ['a name of 128 characters', 'n'.repeat(128), true],
    ['a trailing space', 'core ', false],
    ['a tab', 'core\trouter', false],
    ['an empty name', '', false],
    ['129 characters', 'n'.repeat(129), false],
  ])('%s: %j', (_, name, ok) => {
    const event = { pathParameters: {}, queryStringParameters: {}, body: { name, deviceType: 'ios' } };
    expect(validateCreate(event)).toBe(ok);
    expect(summaryProblems({ ...good, name }, 'input').length === 0).toBe(ok);
  });
});

describe('cursor', () => {
  it('round-trips any page key a tree name allows, within the token length limit', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: TREE_LIMITS.name, unit: 'binary' }).filter((n) => !/\p{Cc}/u.test(n)),
        fc.stringMatching(/^[0-9a-f]{24}$/),
        (name, id) => {
          const token = encodeCursor({ name, id });
          expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(token.length).toBeLessThanOrEqual(1024);
          expect(decodeCursor(token)).toEqual({ name, id });
        },
      ),
    );
  });

  it('turns any other string into undefined without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.stringMatching(/^[A-Za-z0-9_-]{1,200}$/)), (token) => {
        const key = decodeCursor(token);
        if (key !== undefined) expect(encodeCursor(key)).toBe(token);
      }),
    );
  });

  it('refuses a token with a flipped character', () => {
    const token = encodeCursor({ name: 'core', id: good.id });
    const flipped = `${token.slice(0, 5)}${token[5] === 'A' ? 'B' : 'A'}${token.slice(6)}`;
    expect(decodeCursor(flipped)).toBeUndefined();
  });
});

describe('transientReason', () => {
  it('classifies unreachable, throttled and permanent failures', () => {
    expect(transientReason(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('unreachable');
    expect(transientReason(new Error('wrapped', { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) }))).toBe('unreachable');
    expect(transientReason(Object.assign(new Error('x'), { name: 'ProvisionedThroughputExceededException' }))).toBe('throttled or failing');
    expect(transientReason(Object.assign(new Error('x'), { name: 'ValidationException' }))).toBeUndefined();
    expect(transientReason('nope')).toBeUndefined();
  });
});

describe('tree names refuse format characters', () => {
  it.each(['rt\u202eevil', 'rt\u200b1', '\u2066rt', 'rt\ufeff', 'rt\u00ad1', 'rt\u0000', 'rt\u007f'])(
    'refuses %j (bidirectional override, zero-width, control)',
    (name) => {
      expect(new RegExp(LABEL_PATTERN_SOURCE, 'u').test(name)).toBe(false);
    },
  );
  it.each(['rt-1', 'Zürich core', 'ルーター'])('accepts %j', (name) => {
    expect(new RegExp(LABEL_PATTERN_SOURCE, 'u').test(name)).toBe(true);
  });
});
