/**
 * The version, node, export and import operations, free of Lambda and of DynamoDB. Every write
 * reads the tree, builds the changed version, checks the *whole* result against every rule of
 * config-checks.ts, and commits conditioned on the revision it read; when another writer got
 * there first it reads again and re-checks (so a concurrent write can never slip past a check).
 */
import { randomBytes } from 'node:crypto';
import { logger } from '../platform/logger.js';
import { DYNAMO_ITEM_LIMIT_BYTES } from '../platform/item-size.js';
import { NAME_RULE, decodeSegment, isPathName, pathNameProblem, refuseBadNames } from '../platform/names.js';
import {
  BadRequest,
  Conflict,
  ContentTooLarge,
  InternalError,
  NotFound,
  ServiceUnavailable,
  describeFieldErrors,
  fieldPath,
  type FieldError,
  type FieldPlace,
} from '../platform/problem.js';
import { emptyRoot, findNode, ROOT_NODE, type Node, type Rule, type Selector, type Version } from './config-model.js';
import { selectOf } from './selectors.js';
import { CONFIG_LIMITS, normalizeRule, transportBytes, versionProblems, type ConfigProblem } from './config-checks.js';
import { newTreeId, storeCall } from './service.js';
import { TREE_LIMITS, versionLabelProblem, type TreeSummary } from './model.js';
import {
  contentItemBytes,
  contentWireBytes,
  occurrenceOrdinals,
  treeItemBytes,
  type ContentRef,
  type TreeChange,
  type TreeState,
  type VersionContent,
  type VersionStore,
} from './version-store.js';

export interface VersionDeps {
  readonly store: VersionStore;
  readonly now: () => Date;
  /** Waits between attempts when writers contend; injectable so tests need not wait. */
  readonly pause?: (ms: number) => Promise<void>;
}

/** Who asks: the caller's token subject, recorded in `createdBy` / `lastUpdatedBy`. */
export type Caller = string;

const ATTEMPTS = 6;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const newContentId = (): string => randomBytes(8).toString('hex');

// ---- addressing ----

const OCCURRENCE = /^(.*)~([1-9][0-9]*)$/;

/**
 * The index of the version `address` names: `label` (or `label~1`) names the version of that
 * label with ordinal 1; for a label an import or a seed repeats, `label~2` names ordinal 2, and
 * so on. Ordinals are stored with the versions and never renumbered, so an address keeps naming
 * one version until that version is deleted or renamed (then it is 404 until a create or a rename
 * takes the label again). Labels cannot contain `~` (see `versionLabelProblem`), so the two forms
 * never meet.
 */
export const resolveVersion = (state: Pick<TreeState, 'summary' | 'contents'>, address: string): number | undefined => {
  const find = (label: string, ordinal: number) => state.summary.versions.findIndex((v, i) => v === label && state.contents[i]?.ordinal === ordinal);
  const exact = find(address, 1);
  if (exact >= 0) return exact;
  const m = OCCURRENCE.exec(address);
  const found = m ? find(m[1] as string, Number(m[2])) : -1;
  return found >= 0 ? found : undefined;
};

/** How the version at `index` is addressed (the inverse of {@link resolveVersion}). */
export const versionAddress = (state: Pick<TreeState, 'summary' | 'contents'>, index: number): string => {
  const label = state.summary.versions[index] as string;
  const ordinal = state.contents[index]?.ordinal ?? 1;
  return ordinal === 1 ? label : `${label}~${ordinal}`;
};

/** A path parameter decoded (API Gateway passes them still percent-encoded). */
const decoded = (raw: string, field: string): string => {
  const value = decodeSegment(raw);
  if (value === undefined)
    throw new BadRequest(`The request is invalid: ${field} is not valid percent-encoding.`, [{ in: 'path', field, message: 'is not valid percent-encoding' }]);
  return value;
};

/** The node path of `{nodePath+}`: `base/wan/pe`, each segment decoded and checked. */
export const parseNodePath = (raw: string): string[] => {
  const segments = raw.split('/').map((s) => decoded(s, 'nodePath'));
  if (segments[0] !== ROOT_NODE)
    throw new BadRequest(`The request is invalid: nodePath must start at ${ROOT_NODE}.`, [
      { in: 'path', field: 'nodePath', message: `must start at ${ROOT_NODE}` },
    ]);
  const bad = segments.findIndex((s) => !isPathName(s));
  if (bad >= 0)
    throw new BadRequest(`The request is invalid: nodePath segment ${bad + 1} ${NAME_RULE}.`, [
      { in: 'path', field: 'nodePath', message: `segment ${bad + 1} ${NAME_RULE}` },
    ]);
  if (segments.length > CONFIG_LIMITS.nodeDepth) {
    throw new BadRequest(`The request is invalid: nodePath is deeper than ${CONFIG_LIMITS.nodeDepth} levels.`, [
      { in: 'path', field: 'nodePath', message: `is deeper than ${CONFIG_LIMITS.nodeDepth} levels` },
    ]);
  }
  return segments;
};

/** A new version label: the one label rule (no `~`, so no label looks like `label~2`). */
const checkNewLabel = (label: string, field: string): void => refuseBadNames('body', { [field]: label }, versionLabelProblem);

// ---- reading ----

const loadState = async (store: VersionStore, treeId: string): Promise<TreeState> => {
  const loaded = await storeCall(() => store.loadTree(treeId));
  if (!loaded) throw new NotFound(`No tree has the id ${treeId}.`);
  if (!loaded.ok) throw new InternalError('damaged tree item', { treeIds: [loaded.id], problems: { [loaded.id]: loaded.problems } });
  return loaded.state;
};

const indexOf = (state: TreeState, rawAddress: string): number => {
  const address = decoded(rawAddress, 'version');
  const index = resolveVersion(state, address);
  if (index === undefined) throw new NotFound(`Tree ${state.summary.id} has no version ${JSON.stringify(address)}.`);
  return index;
};

/** What a version that holds nothing yet (a new tree's first, a seeded label) reads as: empty, as old as its tree. */
const emptyContent = (summary: TreeSummary): VersionContent => ({
  variables: {},
  root: emptyRoot(),
  created: summary.created,
  createdBy: '',
  lastUpdated: summary.created,
  lastUpdatedBy: '',
});

const loadContent = async (store: VersionStore, state: TreeState, index: number): Promise<VersionContent> => {
  const ref = state.contents[index] as ContentRef;
  if (ref.id === '') return emptyContent(state.summary);
  const content = await storeCall(() => store.loadContent(state.summary.id, ref.id));
  if (!content) throw new InternalError('tree refers to missing content', { treeId: state.summary.id, contentId: ref.id });
  return content;
};

/** The version as clients see it. */
export interface VersionView extends Version {
  readonly treeId: string;
  /** How to address this version in a URL (differs from `name` only for a repeated label). */
  readonly address: string;
}

/** Version `index` of `versions` with its content, as exports list it. */
const versionOf = (versions: readonly string[], index: number, c: VersionContent): Version => ({
  name: versions[index] as string,
  variables: c.variables,
  root: c.root,
  created: c.created,
  createdBy: c.createdBy,
  lastUpdated: c.lastUpdated,
  lastUpdatedBy: c.lastUpdatedBy,
});

const view = (state: TreeState, index: number, c: VersionContent): VersionView => ({
  treeId: state.summary.id,
  ...versionOf(state.summary.versions, index, c),
  address: versionAddress(state, index),
});

/** One version with its whole node tree. */
export const getVersion = async (deps: Pick<VersionDeps, 'store'>, treeId: string, address: string): Promise<VersionView> => {
  const state = await loadState(deps.store, treeId);
  const index = indexOf(state, address);
  return view(state, index, await loadContent(deps.store, state, index));
};

/**
 * A version for evaluation (compliance's `VersionReader`): `tree: false` for an unknown tree,
 * no `version` for an unknown label; the same addressing as the routes (`label~2`).
 */
export const readVersion = async (store: VersionStore, treeId: string, address: string): Promise<{ readonly tree: boolean; readonly version?: Version }> => {
  const loaded = await storeCall(() => store.loadTree(treeId));
  if (!loaded) return { tree: false };
  if (!loaded.ok) throw new InternalError('damaged tree item', { treeIds: [loaded.id], problems: { [loaded.id]: loaded.problems } });
  const index = resolveVersion(loaded.state, address);
  if (index === undefined) return { tree: true };
  return { tree: true, version: versionOf(loaded.state.summary.versions, index, await loadContent(store, loaded.state, index)) };
};

/** A node as `GET …/nodes/{nodePath+}` returns it: its own content and its children's names. */
export interface NodeView {
  readonly path: string;
  readonly name: string;
  readonly devices: readonly string[];
  readonly select?: readonly Selector[];
  readonly rules: readonly Rule[];
  readonly children: readonly string[];
}

const nodeView = (path: readonly string[], node: Node): NodeView => ({
  path: path.join('/'),
  name: node.name,
  devices: node.devices,
  ...(node.select ? { select: node.select } : {}),
  rules: node.rules,
  children: node.children.map((c) => c.name),
});

export const getNode = async (deps: Pick<VersionDeps, 'store'>, treeId: string, address: string, rawPath: string): Promise<NodeView> => {
  const path = parseNodePath(rawPath);
  const version = await getVersion(deps, treeId, address);
  const node = findNode(version.root, path);
  if (!node) throw new NotFound(`Version ${JSON.stringify(version.name)} has no node ${path.join('/')}.`);
  return nodeView(path, node);
};

// ---- writing ----

/** What one attempt of a write decided: the change to commit and the answer to give. */
interface Plan<T> {
  readonly summary: TreeSummary;
  readonly contents: readonly ContentRef[];
  readonly put: TreeChange['put'];
  readonly remove: readonly string[];
  readonly result: T;
}

/** Reads, plans, commits; again from the read when another writer committed first. */
const mutate = async <T>(deps: VersionDeps, treeId: string, plan: (state: TreeState, at: string) => Promise<Plan<T>>): Promise<T> => {
  const pause = deps.pause ?? sleep;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const state = await loadState(deps.store, treeId);
    const at = deps.now().toISOString();
    const p = await plan(state, at);
    checkSizes(state, p);
    const outcome = await storeCall(() => deps.store.commit({ before: state, summary: p.summary, contents: p.contents, put: p.put, remove: p.remove }));
    if (outcome === 'committed') return p.result;
    if (attempt < ATTEMPTS) await pause(10 * 2 ** attempt + Math.floor(Math.random() * 40));
  }
  logger.warn('tree write gave up after contention', { treeId, attempts: ATTEMPTS });
  throw new ServiceUnavailable('The tree could not be changed because of concurrent writes; try again.');
};

const touched = (summary: TreeSummary, at: string, versions: readonly string[] = summary.versions): TreeSummary => ({
  ...summary,
  versions: [...versions],
  // Never before created, even when a seeded tree carries a future timestamp.
  lastUpdated: at > summary.lastUpdated ? at : summary.lastUpdated,
});

/**
 * Throws the problem the checks found: 400 for malformed input first, then 409 for a clash
 * with stored state, then 413 for a limit. Each problem's `field` is a place in the request body.
 */
const throwProblems = (problems: readonly ConfigProblem[]): void => {
  if (!problems.length) return;
  const pick = problems.filter((p) => p.kind === undefined).length
    ? problems.filter((p) => p.kind === undefined)
    : problems.filter((p) => p.kind === 'conflict').length
      ? problems.filter((p) => p.kind === 'conflict')
      : problems;
  const errors: FieldError[] = pick.map((p) => ({ in: 'body', field: p.field, message: p.message }));
  const detail = describeFieldErrors(errors);
  const kind = pick[0]?.kind;
  if (kind === 'conflict') throw new Conflict(`The change conflicts with the version: ${detail}.`, 'tree-conflict');
  if (kind === 'limit') throw new ContentTooLarge(`The change goes past a limit: ${detail}.`, errors);
  throw new BadRequest(`The request is invalid: ${detail}.`, errors);
};

/**
 * The problems of a changed version that its stored form did not have: a write answers for
 * what it changes, so a name or limit rule tightened after a version was stored never blocks
 * the writes that would repair it (the stored form passed every rule of its day). What the
 * write states itself (`own`) is always checked.
 */
const introduced = (
  after: readonly ConfigProblem[],
  before: Pick<VersionContent, 'root' | 'variables'>,
  own: (p: ConfigProblem) => boolean = () => false,
): ConfigProblem[] => {
  const had = new Set(versionProblems(before.root, before.variables).map((p) => `${p.field}\n${p.message}`));
  return after.filter((p) => own(p) || !had.has(`${p.field}\n${p.message}`));
};

/**
 * The tree's export document as transported, in bytes: the document with each version's name
 * only, escaped, plus each content as counted in its ref, less the one byte per version saved
 * where a name and its content join into one object (`{"name":"v"}` + `{"root":…}` is
 * `{"name":"v","root":…}`). Exact for refs that keep `wireBytes`.
 */
export const treeTransportBytes = (state: Pick<TreeState, 'summary' | 'contents'>): number => {
  const empty = contentWireBytes(emptyContent(state.summary));
  const contents = state.contents.reduce((sum, c) => sum + (c.id === '' ? empty : c.wireBytes) - 1, 0);
  return (
    transportBytes(
      JSON.stringify(
        exportDocument(
          state.summary,
          state.summary.versions.map((name) => ({ name })),
        ),
      ),
    ) + contents
  );
};

/**
 * Refuses (413) a change past a size, each counted in the unit of what holds it: every content
 * item and the tree item within DynamoDB's item limit (stored bytes), and the tree's export
 * within {@link CONFIG_LIMITS.treeTransportBytes} (transported bytes). The transport limit
 * refuses only a change that grows the tree, so that a tree over it can always shrink.
 */
const checkSizes = (before: Pick<TreeState, 'summary' | 'contents'> | undefined, after: Pick<Plan<unknown>, 'summary' | 'contents' | 'put'>): void => {
  for (const { id, content } of after.put) {
    const bytes = contentItemBytes(after.summary.id, id, content);
    if (bytes > DYNAMO_ITEM_LIMIT_BYTES)
      throw new ContentTooLarge(`A version would take ${bytes} bytes as stored, more than the ${DYNAMO_ITEM_LIMIT_BYTES} of one DynamoDB item.`);
  }
  const item = treeItemBytes(after.summary, after.contents);
  if (item > DYNAMO_ITEM_LIMIT_BYTES)
    throw new ContentTooLarge(`The tree's names and labels would take ${item} bytes as stored, more than the ${DYNAMO_ITEM_LIMIT_BYTES} of one DynamoDB item.`);
  const wire = treeTransportBytes(after);
  if (wire > CONFIG_LIMITS.treeTransportBytes && wire > (before ? treeTransportBytes(before) : 0)) {
    throw new ContentTooLarge(
      `The tree would be ${wire} bytes as transported (its export, escaped as a Lambda answer carries it), more than the ${CONFIG_LIMITS.treeTransportBytes} a tree may be.`,
    );
  }
};

/**
 * Writes version `index` of `state` as `content` (materializing it when it held nothing); a new
 * `label` takes ordinal 1 (new labels are unique in the tree).
 */
const writeVersion = <T>(state: TreeState, index: number, content: VersionContent, at: string, result: T, label?: string): Plan<T> => {
  const old = state.contents[index] as ContentRef;
  const id = old.id || newContentId();
  const renamed = label !== undefined && label !== state.summary.versions[index];
  const ref: ContentRef = { id, wireBytes: contentWireBytes(content), ordinal: renamed ? 1 : old.ordinal };
  const versions = renamed ? state.summary.versions.map((v, i) => (i === index ? label : v)) : state.summary.versions;
  return {
    summary: touched(state.summary, at, versions),
    contents: state.contents.map((c, i) => (i === index ? ref : c)),
    put: [{ id, content }],
    remove: [],
    result,
  };
};

export interface CreateVersionInput {
  readonly name: string;
  readonly base: string;
}

/** A new version: a deep copy of `base`'s nodes, rules, devices and variables. */
export const createVersion = (deps: VersionDeps, treeId: string, input: CreateVersionInput, caller: Caller): Promise<VersionView> => {
  checkNewLabel(input.name, 'name');
  return mutate(deps, treeId, async (state, at) => {
    if (state.summary.versions.includes(input.name))
      throw new Conflict(`Tree ${treeId} already has a version ${JSON.stringify(input.name)}.`, 'version-exists');
    const baseIndex = resolveVersion(state, input.base);
    if (baseIndex === undefined) throw new NotFound(`Tree ${treeId} has no version ${JSON.stringify(input.base)} to copy.`);
    if (state.summary.versions.length >= TREE_LIMITS.versions) throw new ContentTooLarge(`A tree holds at most ${TREE_LIMITS.versions} versions.`);
    const base = await loadContent(deps.store, state, baseIndex);
    // Stored content is plain JSON: a JSON round trip is the deep copy.
    const copy = JSON.parse(JSON.stringify({ variables: base.variables, root: base.root })) as Pick<VersionContent, 'variables' | 'root'>;
    const content: VersionContent = { ...copy, created: at, createdBy: caller, lastUpdated: at, lastUpdatedBy: caller };
    const id = newContentId();
    const contents = [...state.contents, { id, wireBytes: contentWireBytes(content), ordinal: 1 }];
    const versions = [...state.summary.versions, input.name];
    const index = versions.length - 1;
    const result = view({ ...state, summary: { ...state.summary, versions }, contents }, index, content);
    return { summary: touched(state.summary, at, versions), contents, put: [{ id, content }], remove: [], result };
  });
};

export interface UpdateVersionInput {
  readonly name?: string;
  readonly variables?: Readonly<Record<string, string>>;
}

/** Renames a version and/or replaces its variables (refused when a rule would name a missing one). */
export const updateVersion = (deps: VersionDeps, treeId: string, address: string, input: UpdateVersionInput, caller: Caller): Promise<VersionView> => {
  if (input.name !== undefined) checkNewLabel(input.name, 'name');
  return mutate(deps, treeId, async (state, at) => {
    const index = indexOf(state, address);
    if (input.name !== undefined && input.name !== state.summary.versions[index] && state.summary.versions.includes(input.name)) {
      throw new Conflict(`Tree ${treeId} already has a version ${JSON.stringify(input.name)}.`, 'version-exists');
    }
    const old = await loadContent(deps.store, state, index);
    const variables = input.variables ?? old.variables;
    // A rule naming a variable the new set lacks is a fault of `variables`: say which rule.
    throwProblems(
      introduced(versionProblems(old.root, variables), old).map((p) =>
        p.field.startsWith('variables') ? p : { ...p, field: 'variables', message: `leaves the rule at ${p.field} with a problem: it ${p.message}` },
      ),
    );
    const content: VersionContent = { ...old, variables, lastUpdated: at, lastUpdatedBy: caller };
    const after = writeVersion(state, index, content, at, undefined, input.name);
    return { ...after, result: view({ ...state, summary: after.summary, contents: after.contents }, index, content) };
  });
};

/** Deletes a version; the last one cannot be deleted (409). */
export const deleteVersion = (deps: VersionDeps, treeId: string, address: string): Promise<void> =>
  mutate(deps, treeId, async (state, at) => {
    const index = indexOf(state, address);
    if (state.summary.versions.length === 1)
      throw new Conflict(
        `Version ${JSON.stringify(state.summary.versions[0])} is the last of tree ${treeId}; a tree keeps at least one version.`,
        'last-version',
      );
    const ref = state.contents[index] as ContentRef;
    return {
      summary: touched(
        state.summary,
        at,
        state.summary.versions.filter((_, i) => i !== index),
      ),
      contents: state.contents.filter((_, i) => i !== index),
      put: [],
      remove: ref.id ? [ref.id] : [],
      result: undefined,
    };
  });

/** Deletes a tree, its name and every version. */
export const deleteTree = async (deps: VersionDeps, treeId: string): Promise<void> => {
  const pause = deps.pause ?? sleep;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const state = await loadState(deps.store, treeId);
    if ((await storeCall(() => deps.store.delete(state))) === 'deleted') {
      logger.info('tree deleted', { treeId });
      return;
    }
    if (attempt < ATTEMPTS) await pause(10 * 2 ** attempt);
  }
  throw new ServiceUnavailable('The tree could not be deleted because of concurrent writes; try again.');
};

/** `root` with the node at `path` replaced by `node` (`undefined`: removed); the parent must exist. */
const replaceNode = (root: Node, path: readonly string[], node: Node | undefined): Node => {
  if (path.length === 1) return node ?? root;
  const [, next, ...rest] = path;
  const i = root.children.findIndex((c) => c.name === next);
  const children = [...root.children];
  if (rest.length === 0) {
    if (node === undefined) children.splice(i, 1);
    else if (i >= 0) children[i] = node;
    else children.push(node);
  } else children[i] = replaceNode(root.children[i] as Node, path.slice(1), node);
  return { ...root, children };
};

/** The place of the node at `path` in the problems of {@link versionProblems} (`root.children.2`). */
const placeOf = (root: Node, path: readonly string[]): FieldPlace => {
  const place: (string | number)[] = ['root'];
  let node = root;
  for (const name of path.slice(1)) {
    const i = node.children.findIndex((c) => c.name === name);
    place.push('children', i);
    node = node.children[i] as Node;
  }
  return place;
};

export interface PutNodeInput {
  readonly devices?: readonly string[];
  readonly select?: readonly Selector[];
  readonly rules?: readonly Rule[];
}

/**
 * Creates or replaces one node. The parent must exist. A field left out keeps the node's
 * current value (empty for a new node); the node's children stay.
 */
export const putNode = (
  deps: VersionDeps,
  treeId: string,
  address: string,
  rawPath: string,
  input: PutNodeInput,
  caller: Caller,
): Promise<{ readonly created: boolean; readonly node: NodeView }> => {
  const path = parseNodePath(rawPath);
  return mutate(deps, treeId, async (state, at) => {
    const index = indexOf(state, address);
    const old = await loadContent(deps.store, state, index);
    if (path.length > 1 && !findNode(old.root, path.slice(0, -1)))
      throw new NotFound(`Version ${JSON.stringify(state.summary.versions[index])} has no node ${path.slice(0, -1).join('/')} to hold ${path.join('/')}.`);
    const existing = findNode(old.root, path);
    // A new node's name is its path's last segment; a stored one keeps the name it has.
    if (!existing) refuseBadNames('path', { nodePath: path.at(-1) }, pathNameProblem);
    const node: Node = {
      name: path.at(-1) as string,
      devices: [...(input.devices ?? existing?.devices ?? [])],
      ...selectOf(input.select ?? existing?.select),
      rules: (input.rules ?? existing?.rules ?? []).map(normalizeRule),
      children: existing?.children ?? [],
    };
    const root = replaceNode(old.root, path, node);
    const place = `${fieldPath(...placeOf(root, path))}.`;
    throwProblems(introduced(versionProblems(root, old.variables), old, (p) => ownField(p, place) !== undefined).map((p) => inNodeBody(p, place)));
    const content: VersionContent = { ...old, root, lastUpdated: at, lastUpdatedBy: caller };
    return writeVersion(state, index, content, at, { created: existing === undefined, node: nodeView(path, node) });
  });
};

/**
 * A problem of the version after a node write, placed in the request body: the node's own
 * fields as the body names them (`rules.0.id`); what the write caused elsewhere (a descendant
 * that now repeats one of its rule ids, a limit of the whole version) on `rules` or on the
 * whole body, its place in the version told in the message.
 */
const inNodeBody = (problem: ConfigProblem, place: string): ConfigProblem => {
  const own = ownField(problem, place);
  if (own !== undefined) return { ...problem, field: own };
  return {
    ...problem,
    field: problem.field.startsWith(`${place}children.`) ? 'rules' : '',
    message: `leaves ${problem.field} of the version with a problem: it ${problem.message}`,
  };
};

/** The field of a node's own problem as its request body names it (`rules…`, `devices…`, `select…`); `undefined` for a problem elsewhere. */
const ownField = (problem: ConfigProblem, place: string): string | undefined => {
  const rest = problem.field.startsWith(place) ? problem.field.slice(place.length) : undefined;
  return rest?.startsWith('rules') || rest?.startsWith('devices') || rest?.startsWith('select') ? rest : undefined;
};

/** Deletes a node and its subtree; `base` cannot be deleted (409). */
export const deleteNode = (deps: VersionDeps, treeId: string, address: string, rawPath: string, caller: Caller): Promise<void> => {
  const path = parseNodePath(rawPath);
  if (path.length === 1) throw new Conflict(`The root node ${ROOT_NODE} cannot be deleted; delete the version instead.`, 'root-node');
  return mutate(deps, treeId, async (state, at) => {
    const index = indexOf(state, address);
    const old = await loadContent(deps.store, state, index);
    if (!findNode(old.root, path)) throw new NotFound(`Version ${JSON.stringify(state.summary.versions[index])} has no node ${path.join('/')}.`);
    const content: VersionContent = { ...old, root: replaceNode(old.root, path, undefined), lastUpdated: at, lastUpdatedBy: caller };
    return writeVersion(state, index, content, at, undefined);
  });
};

// ---- export and import ----

/** The export document's `format`: what `POST /configuration_manager/imports` takes. */
export const EXPORT_FORMAT = 'netconfig-tree/1';

export interface TreeExport {
  readonly format: typeof EXPORT_FORMAT;
  readonly id: string;
  readonly name: string;
  readonly deviceType: string;
  readonly description?: string;
  readonly created: string;
  readonly lastUpdated: string;
  readonly versions: readonly Version[];
}

/** The export document of a tree with `versions` (also measured, with labels only, for the transport limit). */
function exportDocument<V>(s: TreeSummary, versions: readonly V[]) {
  return {
    format: EXPORT_FORMAT as typeof EXPORT_FORMAT,
    id: s.id,
    name: s.name,
    deviceType: s.deviceType,
    ...(s.description !== undefined ? { description: s.description } : {}),
    created: s.created,
    lastUpdated: s.lastUpdated,
    versions,
  };
}

/** The whole tree, every version, as one JSON document. */
export const exportTree = async (deps: Pick<VersionDeps, 'store'>, treeId: string): Promise<TreeExport> => {
  const state = await loadState(deps.store, treeId);
  const contents = await Promise.all(state.summary.versions.map((_, i) => loadContent(deps.store, state, i)));
  return exportDocument(
    state.summary,
    contents.map((c, i) => versionOf(state.summary.versions, i, c)),
  );
};

/** An import document after schema validation (ids, timestamps and authors are ignored). */
export interface ImportInput {
  readonly name: string;
  readonly deviceType: string;
  readonly description?: string;
  readonly versions: readonly { readonly name: string; readonly variables?: Readonly<Record<string, string>>; readonly root: Node }[];
}

const normalizeNode = (node: Node): Node => ({
  name: node.name,
  devices: [...(node.devices ?? [])],
  ...selectOf(node.select),
  rules: (node.rules ?? []).map(normalizeRule),
  children: (node.children ?? []).map(normalizeNode),
});

export interface ImportDeps extends VersionDeps {
  readonly newId?: () => string;
}

/**
 * Creates a tree from an export document under a new id: every version checked as the routes
 * check it, its label by the rule of new labels (labels may repeat, as exports of seeded or
 * imported trees do: the i-th version of a label is addressed `label~i`). 409 when the name is
 * taken. A refused or failed import leaves nothing behind (see `VersionStore.create`).
 */
export const importTree = async (deps: ImportDeps, input: ImportInput, caller: Caller): Promise<TreeSummary> => {
  refuseBadNames('body', {
    name: input.name,
    deviceType: input.deviceType,
    ...Object.fromEntries(input.versions.map((v, i) => [fieldPath('versions', i, 'name'), v.name])),
  });
  const problems: ConfigProblem[] = [];
  const versions = input.versions.map((v, i) => {
    const variables = { ...(v.variables ?? {}) };
    const root = normalizeNode(v.root);
    const labelProblem = versionLabelProblem(v.name);
    if (labelProblem) problems.push({ field: fieldPath('versions', i, 'name'), message: labelProblem });
    problems.push(...versionProblems(root, variables, ['versions', i]));
    return { name: v.name, variables, root };
  });
  throwProblems(problems);
  const ordinals = occurrenceOrdinals(versions.map((v) => v.name));
  const pause = deps.pause ?? sleep;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const at = deps.now().toISOString();
    const put = versions.map((v) => ({
      id: newContentId(),
      content: { variables: v.variables, root: v.root, created: at, createdBy: caller, lastUpdated: at, lastUpdatedBy: caller },
    }));
    const contents = put.map((p, i) => ({ id: p.id, wireBytes: contentWireBytes(p.content), ordinal: ordinals[i] as number }));
    const summary: TreeSummary = {
      id: (deps.newId ?? newTreeId)(),
      name: input.name,
      deviceType: input.deviceType,
      versions: versions.map((v) => v.name),
      created: at,
      lastUpdated: at,
      ...(input.description !== undefined ? { description: input.description } : {}),
    };
    checkSizes(undefined, { summary, contents, put });
    const outcome = await storeCall(() => deps.store.create({ summary, contents, revision: 1 }, put));
    if (outcome === 'created') {
      logger.info('tree imported', { treeId: summary.id, versions: versions.length });
      return summary;
    }
    if (outcome === 'name-taken') throw new Conflict(`A tree named "${input.name}" already exists.`, 'tree-name-taken');
    if (attempt < ATTEMPTS) await pause(10 * 2 ** attempt);
  }
  throw new ServiceUnavailable('The tree could not be imported because of concurrent writes; try again.');
};
