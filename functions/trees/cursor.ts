/** The continuation token of the tree list: where the next page starts (name, then id). */
import { decodeCursor as decodeFields, encodeCursor as encodeFields } from '../platform/cursor.js';
import { TREE_ID_PATTERN } from './model.js';
import type { TreePageKey } from './store.js';

export const encodeCursor = (key: TreePageKey): string => encodeFields({ n: key.name, i: key.id });

/** The page key inside a token, or `undefined` when the token is not one this API issued. */
export const decodeCursor = (token: string): TreePageKey | undefined => {
  const fields = decodeFields(token, ['n', 'i'], ({ i }) => TREE_ID_PATTERN.test(i));
  return fields && { name: fields.n, id: fields.i };
};
