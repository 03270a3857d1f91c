/**
 * Exemptions, free of Lambda: checking what a writer sends, storing it with who wrote it, and
 * reading a tree's exemptions. An exemption names one rule by id and the devices it exempts
 * (by name or by a selector); the tree it belongs to must exist (404), its versions need not
 * hold the rule (an id no version holds exempts nothing, as a rule removed since).
 */
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { BadRequest, NotFound } from '../platform/problem.js';
import { compilePattern } from '../platform/re2.js';
import type { ChangelogPage } from '../runtime/changelog.js';
import { deviceNameProblem } from '../trees/config-checks.js';
import { storeCall } from '../trees/service.js';
import type { TreeStore } from '../trees/store.js';
import { EXEMPTION_ID_PATTERN, type Exemption, type ExemptionInput } from './model.js';
import { EXEMPTION_MAX_YEARS } from './schemas.js';
import { newExemptionId, type ExemptionStore, type StoredExemption } from './store.js';

export interface ExemptionDeps {
  readonly store: Pick<ExemptionStore, 'get' | 'list' | 'create' | 'replace' | 'delete'>;
  readonly trees: Pick<TreeStore, 'get'>;
  readonly now: () => Date;
  readonly newId?: (now: Date) => string;
}

/** A list's query as the route's schema let it through. */
export interface PageQuery {
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
}

export const EXEMPTION_PAGE = { default: 50, max: 100 } as const;
const EXEMPTION_ID = new RegExp(EXEMPTION_ID_PATTERN);
const DATE_PART = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/;

const refuse = (field: string, message: string): never => {
  throw new BadRequest(`The request is invalid: ${field} ${message}.`, [{ in: 'body', field, message }]);
};

/** `until` as a time: a real calendar date and clock time (the schema checked the shape), after now and at most five years ahead. */
const untilOf = (until: string, now: Date): number => {
  const [, y, mo, d, h, mi, s] = DATE_PART.exec(until)!.map(Number) as [number, number, number, number, number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  const offset = /([+-])(\d\d):(\d\d)$/.exec(until);
  const real =
    day.getUTCFullYear() === y &&
    day.getUTCMonth() === mo - 1 &&
    day.getUTCDate() === d &&
    h < 24 &&
    mi < 60 &&
    s < 60 &&
    (!offset || (Number(offset[2]) < 24 && Number(offset[3]) < 60));
  const at = Date.parse(until);
  if (!real || !Number.isFinite(at)) refuse('until', 'is not a real date and time');
  if (at <= now.getTime()) refuse('until', `must be in the future (it is ${now.toISOString()} now)`);
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + EXEMPTION_MAX_YEARS);
  if (at > latest.getTime()) refuse('until', `must be at most ${EXEMPTION_MAX_YEARS} years ahead (${latest.toISOString()})`);
  return at;
};

/** The schema's shapes hold; this checks what it cannot: one of devices and selector, real device names, a pattern RE2 compiles, a real date. */
const checkInput = (input: ExemptionInput, now: Date): void => {
  if (input.devices && input.selector) refuse('selector', 'must not be given with devices (exactly one of them names the devices)');
  if (!input.devices && !input.selector) refuse('devices', 'or selector must be given (exactly one of them names the devices)');
  input.devices?.forEach((device, i) => {
    const problem = deviceNameProblem(device);
    if (problem) refuse(`devices.${i}`, problem);
  });
  const pattern = input.selector?.namePattern === undefined ? undefined : compilePattern(input.selector.namePattern);
  if (pattern && 'problem' in pattern) refuse('selector.namePattern', pattern.problem);
  untilOf(input.until, now);
};

const fieldsOf = (input: ExemptionInput): ExemptionInput => ({
  ruleId: input.ruleId,
  ...(input.devices ? { devices: input.devices } : {}),
  ...(input.selector ? { selector: input.selector } : {}),
  until: input.until,
  reason: input.reason,
});

const show = ({ revision: _revision, ...exemption }: StoredExemption): Exemption => exemption;

/** The tree exists (its exemptions are read only then): 404 when it does not. */
const checkTree = async (treeId: string, deps: ExemptionDeps): Promise<void> => {
  if (!(await storeCall(() => deps.trees.get(treeId)))) throw new NotFound(`No tree has the id '${treeId}'.`);
};

const stored = async (treeId: string, exemptionId: string, deps: ExemptionDeps): Promise<StoredExemption> => {
  await checkTree(treeId, deps);
  const exemption = await deps.store.get(treeId, exemptionId);
  if (!exemption) throw new NotFound(`Tree '${treeId}' has no exemption '${exemptionId}'.`);
  return exemption;
};

/** `POST …/configs/{treeId}/exemptions`: checks and stores a new exemption made by `by`. */
export const createExemption = async (treeId: string, input: ExemptionInput, by: string, deps: ExemptionDeps): Promise<Exemption> => {
  const now = deps.now();
  checkInput(input, now);
  const at = now.toISOString();
  const exemption: StoredExemption = {
    exemptionId: (deps.newId ?? newExemptionId)(now),
    treeId,
    ...fieldsOf(input),
    createdAt: at,
    createdBy: by,
    updatedAt: at,
    updatedBy: by,
    revision: 1,
  };
  await deps.store.create(exemption);
  return show(exemption);
};

/** `PUT …/exemptions/{exemptionId}`: replaces an exemption's fields (who made it and when are kept). */
export const replaceExemption = async (treeId: string, exemptionId: string, input: ExemptionInput, by: string, deps: ExemptionDeps): Promise<Exemption> => {
  const now = deps.now();
  checkInput(input, now);
  const before = await stored(treeId, exemptionId, deps);
  const after: StoredExemption = {
    exemptionId,
    treeId,
    ...fieldsOf(input),
    createdAt: before.createdAt,
    createdBy: before.createdBy,
    updatedAt: now.toISOString(),
    updatedBy: by,
    revision: before.revision + 1,
  };
  await deps.store.replace(before, after);
  return show(after);
};

/** `DELETE …/exemptions/{exemptionId}`. */
export const deleteExemption = async (treeId: string, exemptionId: string, by: string, deps: ExemptionDeps): Promise<void> => {
  const exemption = await stored(treeId, exemptionId, deps);
  await deps.store.delete(exemption, deps.now().toISOString(), by);
};

/** `GET …/exemptions/{exemptionId}`. */
export const getExemption = async (treeId: string, exemptionId: string, deps: ExemptionDeps): Promise<Exemption> =>
  show(await stored(treeId, exemptionId, deps));

/** `GET …/configs/{treeId}/exemptions`: a page, newest first; `cursor` is the `next` of the page before. */
export const listExemptions = async (treeId: string, query: PageQuery, deps: ExemptionDeps): Promise<{ items: Exemption[]; next?: string }> => {
  let after: string | undefined;
  if (query.cursor !== undefined) {
    const fields = decodeCursor(query.cursor, ['tree', 'after'], (f) => f.tree === treeId && EXEMPTION_ID.test(f.after));
    if (!fields) throw invalidCursor();
    after = fields.after;
  }
  await checkTree(treeId, deps);
  const page = await deps.store.list(treeId, query.limit === undefined ? EXEMPTION_PAGE.default : Number(query.limit), after);
  return { items: page.items.map(show), ...(page.after ? { next: encodeCursor({ tree: treeId, after: page.after }) } : {}) };
};

/** Reads a page of a subject's changelog (functions/runtime/changelog.ts `listChangelog`, bound to its client). */
export type ChangelogReader = (subject: { readonly kind: 'tree'; readonly name: string }, query: PageQuery) => Promise<ChangelogPage>;

/**
 * `GET …/configs/{treeId}/changelogs`: a page of the tree's entries, newest first. Readable
 * after the tree is deleted (entries are kept by id); 404 only when no tree has the id and none
 * ever had an entry under it.
 */
export const treeChangelog = async (
  treeId: string,
  query: PageQuery,
  deps: { readonly trees: Pick<TreeStore, 'get'>; readonly changelog: ChangelogReader },
) => {
  const page = await deps.changelog({ kind: 'tree', name: treeId }, query);
  if (page.items.length === 0 && query.cursor === undefined && !(await storeCall(() => deps.trees.get(treeId)))) {
    throw new NotFound(`No tree has the id '${treeId}', and none ever had an entry under it.`);
  }
  return page;
};
