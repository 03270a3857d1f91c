import { describe, expect, it } from 'vitest';
import { DYNAMO_ITEM_LIMIT_BYTES, itemBytes } from '../../functions/platform/item-size.js';
import { batchChunks, readTreeState } from '../../functions/trees/version-store.js';

const summary = (versions: string[]) => ({
  pk: 'TREE#abcdefabcdefabcdefabcdef',
  kind: 'tree',
  id: 'abcdefabcdefabcdefabcdef',
  name: 't',
  deviceType: 'x',
  versions,
  created: '2020-01-01T00:00:00.000Z',
  lastUpdated: '2020-01-01T00:00:00.000Z',
});

describe('readTreeState', () => {
  it('numbers the versions of a label by occurrence when a tree item has no ordinals (addresses as they were handed out)', () => {
    const read = readTreeState({
      ...summary(['draft', 'a', 'draft']),
      contents: [
        { id: 'x', bytes: 10 },
        { id: '', bytes: 0 },
        { id: 'y', bytes: 0 },
      ],
    });
    expect(read).toEqual({
      ok: true,
      state: expect.objectContaining({
        contents: [
          { id: 'x', wireBytes: 2 * 10 + 2048, ordinal: 1 },
          { id: '', wireBytes: 0, ordinal: 1 },
          { id: 'y', wireBytes: 0, ordinal: 2 },
        ],
      }),
    });
    expect(readTreeState(summary(['draft', 'draft']))).toMatchObject({ ok: true, state: { contents: [{ ordinal: 1 }, { ordinal: 2 }] } });
  });

  it('keeps stored ordinals, and calls a tree with one address twice damaged', () => {
    const kept = readTreeState({
      ...summary(['draft', 'draft']),
      contents: [
        { id: 'b', wireBytes: 5, ordinal: 3 },
        { id: 'c', wireBytes: 5, ordinal: 2 },
      ],
    });
    expect(kept).toMatchObject({ ok: true, state: { contents: [{ ordinal: 3 }, { ordinal: 2 }] } });
    expect(
      readTreeState({
        ...summary(['draft', 'draft']),
        contents: [
          { id: 'b', wireBytes: 5, ordinal: 2 },
          { id: 'c', wireBytes: 5, ordinal: 2 },
        ],
      }),
    ).toMatchObject({ ok: false });
    expect(readTreeState({ ...summary(['draft']), contents: [{ id: 'b', wireBytes: 5, ordinal: 0 }] })).toMatchObject({ ok: false });
  });
});

describe('item sizes as DynamoDB counts them', () => {
  it('counts names and values in UTF-8, numbers by digits, lists and maps with their overhead', () => {
    // pk: 2 + 1; n: 1 + (2 digits → 1 + 1); l: 1 + 3 + (1 + 2) + (1 + 2); m: 1 + 3 + (1 + 1 + 1)
    expect(itemBytes({ pk: 'a', n: 12, l: [5, 'ab'], m: { x: true } })).toBe(3 + 3 + 10 + 7);
    expect(itemBytes({ s: '😀é' })).toBe(1 + 4 + 2);
  });

  it('chunks batch writes by count and by bytes, in order, one item at least', () => {
    const small = Array.from({ length: 60 }, (_, i) => ({ PutRequest: { Item: { pk: `p${i}` } } }));
    expect(batchChunks(small).map((c) => c.length)).toEqual([25, 25, 10]);
    const big = Array.from({ length: 5 }, (_, i) => ({ PutRequest: { Item: { pk: `p${i}`, body: 'x'.repeat(DYNAMO_ITEM_LIMIT_BYTES - 100) } } }));
    const chunks = batchChunks(big);
    expect(chunks.map((c) => c.length)).toEqual([2, 2, 1]);
    expect(chunks.flat()).toEqual(big);
  });
});
