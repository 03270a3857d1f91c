/**
 * Reading a whole list of NSO's through the relay a page at a time (RFC 8040 list paging as NSO
 * does it: `offset` and `limit` on the list resource), with the members `fields` names. What a
 * backup reads its devices with, and a compliance batch its selectors' inventory.
 */
import { BadGateway } from '../platform/problem.js';
import type { RelayGet } from './check.js';

/** One of NSO's lists, and how a message names it. */
export interface NsoList {
  /** The list resource and its `fields` (`/restconf/data/tailf-ncs:devices/device?fields=name`). */
  readonly path: string;
  /** The list's member in the answer (`tailf-ncs:device`). */
  readonly member: string;
  /** `device`: messages say "its device list", "a device entry", "602 devices". */
  readonly noun: string;
}

/** An entry of a page: its key `name`, and the rest as NSO answered it. */
export type NsoEntry = Readonly<Record<string, unknown>> & { readonly name: string };

export interface PagedRead {
  readonly pageSize: number;
  /** Entries read at most: one more throws `tooMany()`. */
  readonly max: number;
  readonly tooMany: () => Error;
  /** What did not happen when a page fails, for the message (`no backup was started`). */
  readonly nothing: string;
}

/** The entries of a page, or why the page cannot be used. */
const pageEntries = (list: NsoList, status: number, data: unknown): NsoEntry[] | string => {
  // An empty list (or a page past its end) may be answered without content, or as a missing node.
  if (status === 204 || status === 404) return [];
  if (status !== 200) return `answered ${status}`;
  const entries = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[list.member] : undefined;
  if (!Array.isArray(entries)) return `answered without a ${list.member} list`;
  const named = (entry: unknown): entry is NsoEntry =>
    typeof entry === 'object' && entry !== null && typeof (entry as Record<string, unknown>)['name'] === 'string' && (entry as NsoEntry).name !== '';
  return entries.every(named) ? entries : `answered a ${list.noun} entry without a name`;
};

/**
 * Every entry of `list`, read a page at a time until a page comes back short. A page that cannot
 * be used, one longer than asked (an orchestrator that does not page) or one naming an entry
 * again (one that ignores `offset`) is a 502 naming the page.
 */
export const readPagedList = async (adapterId: string, relayGet: RelayGet, list: NsoList, read: PagedRead): Promise<NsoEntry[]> => {
  const seen = new Set<string>();
  const out: NsoEntry[] = [];
  for (let offset = 0; ; offset += read.pageSize) {
    const where = `page ${offset / read.pageSize + 1} of its ${list.noun} list (offset ${offset}, limit ${read.pageSize})`;
    const [result] = await relayGet(adapterId, `${list.path}&offset=${offset}&limit=${read.pageSize}`);
    const page = pageEntries(list, Number(result?.result), result?.data);
    if (typeof page === 'string') throw new BadGateway(`The orchestrator ${page} to ${where}; ${read.nothing}.`);
    if (page.length > read.pageSize || page.some((entry) => seen.has(entry.name))) {
      throw new BadGateway(
        `The orchestrator answered ${where} with ${page.length > read.pageSize ? `${page.length} ${list.noun}s` : `${list.noun}s of an earlier page`}: it does not page its ${list.noun} list (offset and limit); ${read.nothing}.`,
      );
    }
    for (const entry of page) {
      seen.add(entry.name);
      out.push(entry);
    }
    if (out.length > read.max) throw read.tooMany();
    if (page.length < read.pageSize) return out;
  }
};
