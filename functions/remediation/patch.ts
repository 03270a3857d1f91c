/**
 * YANG Patch (RFC 8072, `application/yang-patch+json`) as remediation sends it to NSO: the
 * types, the RESTCONF targets (RFC 8040 data resource identifiers under
 * `/tailf-ncs:devices/device=<name>/config`), and {@link applyEdits}, the patch's meaning over
 * the JSON of one device's configuration (the object inside `tailf-ncs:config`, RFC 7951).
 *
 * JSON does not say which members of a list entry are its keys; a {@link ListKeys} does. Lists
 * are named by their schema path: the member names from the configuration's root, array
 * positions left out (`tailf-ned-cisco-ios:interface/GigabitEthernet`).
 */
import type { JsonValue } from '../trees/config-model.js';

/** The key leaf names of the list at a schema path, or `undefined` when they are not known. */
export type ListKeys = (list: readonly string[]) => readonly string[] | undefined;

/** A {@link ListKeys} from a table: schema paths joined with `/` to key names. */
export const listKeysFrom =
  (table: Readonly<Record<string, readonly string[]>>): ListKeys =>
  (list) => {
    const path = list.join('/');
    return Object.hasOwn(table, path) ? table[path] : undefined;
  };

export const YANG_PATCH_MEDIA_TYPE = 'application/yang-patch+json';

/** The operations remediation writes; `create`, `insert` and `move` are RFC 8072's others. */
export type EditOperation = 'create' | 'delete' | 'insert' | 'merge' | 'move' | 'remove' | 'replace';

/** One edit: `value` holds the target node itself, named by its module-qualified name. */
export interface YangPatchEdit {
  readonly 'edit-id': string;
  readonly operation: EditOperation;
  readonly target: string;
  readonly value?: { readonly [member: string]: JsonValue };
}

/** The body of `PATCH /restconf/data` with `Content-Type: application/yang-patch+json`. */
export interface YangPatch {
  readonly 'ietf-yang-patch:yang-patch': {
    readonly 'patch-id': string;
    readonly edit: readonly YangPatchEdit[];
  };
}

/** One node of a target: a member name and, for a list or leaf-list entry, its key values. */
export interface Step {
  readonly name: string;
  readonly keys?: readonly string[];
}

/** A YANG node name as RFC 7951 member names and RFC 8040 paths write it: `[module:]identifier`. */
export const NODE_NAME = /^(?:[A-Za-z_][A-Za-z0-9_.-]*:)?[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * A key value or device name percent-encoded as RFC 8040 (section 3.5.3) asks: every reserved
 * character of RFC 3986 (`/`, `=`, `,`, `!`, `'`, `(`, `)`, `*`…), spaces and non-ASCII as UTF-8.
 * Throws a `URIError` on a lone surrogate, which has no UTF-8 form.
 */
export const percentEncode = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const DEVICES = 'tailf-ncs:devices';

/** The target of a device's configuration: `/tailf-ncs:devices/device=<name>/config` followed by `steps`. */
export const formatTarget = (device: string, steps: readonly Step[]): string =>
  `/${DEVICES}/device=${percentEncode(device)}/config${steps.map((s) => `/${s.name}${s.keys ? `=${s.keys.map(percentEncode).join(',')}` : ''}`).join('')}`;

/** Thrown by {@link applyEdits} and {@link parseTarget}: the edit the server would refuse, and why. */
export class PatchError extends Error {
  constructor(
    readonly editId: string,
    message: string,
  ) {
    super(message);
  }
}

const parseStep = (segment: string, editId: string): Step => {
  const cut = segment.indexOf('=');
  if (cut < 0) return { name: segment };
  try {
    return {
      name: segment.slice(0, cut),
      keys: segment
        .slice(cut + 1)
        .split(',')
        .map(decodeURIComponent),
    };
  } catch {
    throw new PatchError(editId, `the target segment ${segment} is not percent-encoded UTF-8`);
  }
};

/** The device and the steps below its `config` of a target {@link formatTarget} writes. */
export const parseTarget = (target: string, editId: string): { readonly device: string; readonly steps: Step[] } => {
  const [empty, devices, device, config, ...rest] = target.split('/').map((segment) => parseStep(segment, editId));
  if (empty?.name !== '' || devices?.name !== DEVICES || device?.name !== 'device' || device.keys?.length !== 1 || config?.name !== 'config' || config.keys)
    throw new PatchError(editId, `the target ${target} is not under /${DEVICES}/device=<name>/config`);
  for (const step of rest) if (!NODE_NAME.test(step.name)) throw new PatchError(editId, `${step.name} in the target is not a YANG node name`);
  return { device: device.keys[0] as string, steps: rest };
};

type JsonObject = { [member: string]: JsonValue };
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets a member, `__proto__` included, as a plain own member. */
const setMember = (object: JsonObject, name: string, value: JsonValue): void => {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
};

/** A key leaf's value as a target writes it. */
const keyText = (value: JsonValue | undefined): string | undefined =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;

/** Whether `entry` is the list or leaf-list entry `keys` name (`names`: the list's keys; none for a leaf-list). */
const isEntry = (entry: JsonValue, names: readonly string[] | undefined, keys: readonly string[]): boolean => {
  if (names === undefined) return !isObject(entry) && !Array.isArray(entry) && keys.length === 1 && keyText(entry) === keys[0];
  return isObject(entry) && names.length === keys.length && names.every((name, i) => Object.hasOwn(entry, name) && keyText(entry[name]) === keys[i]);
};

/** The keys of `entry` (a list entry when `names`, a leaf-list value otherwise), or `undefined` when it has none. */
export const entryKeys = (entry: JsonValue, names: readonly string[] | undefined): string[] | undefined => {
  if (names === undefined) {
    const text = isObject(entry) ? undefined : keyText(entry as JsonValue);
    return text === undefined ? undefined : [text];
  }
  if (!isObject(entry)) return undefined;
  const keys = names.map((name) => (Object.hasOwn(entry, name) ? keyText(entry[name]) : undefined));
  return keys.every((k) => k !== undefined) ? (keys as string[]) : undefined;
};

/** The keys of the list at `schema`; throws when an entry is an object and they are unknown. */
const keysOf = (schema: readonly string[], entries: readonly JsonValue[], lists: ListKeys, editId: string): readonly string[] | undefined => {
  if (!entries.some(isObject)) return undefined;
  const names = lists(schema);
  if (!names) throw new PatchError(editId, `the keys of the list ${schema.join('/')} are not known`);
  return names;
};

/** NETCONF merge: objects member by member, list entries by key, leaf-list values once; anything else is replaced. */
const merge = (existing: JsonValue | undefined, value: JsonValue, schema: readonly string[], lists: ListKeys, editId: string): JsonValue => {
  if (isObject(existing) && isObject(value)) {
    for (const name of Object.keys(value)) {
      setMember(existing, name, merge(Object.hasOwn(existing, name) ? existing[name] : undefined, value[name] as JsonValue, [...schema, name], lists, editId));
    }
    return existing;
  }
  if (Array.isArray(existing) && Array.isArray(value)) {
    const entries = existing as JsonValue[];
    const names = keysOf(schema, [...entries, ...value], lists, editId);
    for (const element of value) {
      const keys = entryKeys(element, names);
      if (!keys) throw new PatchError(editId, `an entry of ${schema.join('/')} has no key`);
      const at = entries.findIndex((entry) => isEntry(entry, names, keys));
      if (at < 0) entries.push(structuredClone(element));
      else entries[at] = merge(entries[at], element, schema, lists, editId);
    }
    return entries;
  }
  return structuredClone(value);
};

/** The one member of an edit's `value`, which must name the target node (with or without its module). */
const contentOf = (edit: YangPatchEdit, name: string): JsonValue => {
  const members = Object.keys(edit.value ?? {});
  const local = name.slice(name.indexOf(':') + 1);
  if (members.length !== 1 || (members[0] as string).slice((members[0] as string).indexOf(':') + 1) !== local)
    throw new PatchError(edit['edit-id'], `the value of a ${edit.operation} must hold exactly the target node ${name}`);
  return (edit.value as JsonObject)[members[0] as string] as JsonValue;
};

/** The object a path of steps leads to; containers are created on the way when `create`, list entries never are. */
const descend = (root: JsonObject, steps: readonly Step[], create: boolean, lists: ListKeys, editId: string): JsonObject | undefined => {
  let node = root;
  const schema: string[] = [];
  for (const step of steps) {
    schema.push(step.name);
    let next: JsonValue | undefined = Object.hasOwn(node, step.name) ? node[step.name] : undefined;
    if (step.keys) {
      const keys = step.keys;
      const entries = Array.isArray(next) ? next : [];
      const names = keysOf(schema, entries, lists, editId);
      next = entries.find((entry) => isEntry(entry, names, keys));
      if (!isObject(next)) throw new PatchError(editId, `no entry ${step.keys.join(',')} of ${schema.join('/')}`);
    } else if (next === undefined && create) {
      next = {};
      setMember(node, step.name, next);
    }
    if (next === undefined) return undefined;
    if (!isObject(next)) throw new PatchError(editId, `${schema.join('/')} is not a container`);
    node = next;
  }
  return node;
};

/** Applies one edit to the node named `step` of `parent` (absent when an ancestor is missing). */
const applyAt = (parent: JsonObject | undefined, step: Step, schema: readonly string[], edit: YangPatchEdit, lists: ListKeys): void => {
  const editId = edit['edit-id'];
  const { operation } = edit;
  const writes = operation === 'merge' || operation === 'replace' || operation === 'create';
  const present = parent !== undefined && Object.hasOwn(parent, step.name) ? parent[step.name] : undefined;
  if (!step.keys) {
    if (writes) {
      const content = contentOf(edit, step.name);
      if (operation === 'create' && present !== undefined) throw new PatchError(editId, `${schema.join('/')} already exists`);
      setMember(parent as JsonObject, step.name, operation === 'merge' ? merge(present, content, schema, lists, editId) : structuredClone(content));
    } else if (present !== undefined) delete (parent as JsonObject)[step.name];
    else if (operation === 'delete') throw new PatchError(editId, `${schema.join('/')} does not exist`);
    return;
  }
  const keys = step.keys;
  if (present !== undefined && !Array.isArray(present)) throw new PatchError(editId, `${schema.join('/')} is not a list`);
  const entries = (present ?? []) as JsonValue[];
  const content = writes ? contentOf(edit, step.name) : undefined;
  if (content !== undefined && (!Array.isArray(content) || content.length !== 1))
    throw new PatchError(editId, `the value of an entry of ${schema.join('/')} must be a list of that one entry`);
  const element = (content as JsonValue[] | undefined)?.[0];
  const names = keysOf(schema, element === undefined ? entries : [...entries, element], lists, editId);
  if (element !== undefined && !isEntry(element, names, keys))
    throw new PatchError(editId, `the entry in the value is not the entry ${keys.join(',')} the target names`);
  const at = entries.findIndex((entry) => isEntry(entry, names, keys));
  if (element === undefined) {
    if (at >= 0) entries.splice(at, 1);
    else if (operation === 'delete') throw new PatchError(editId, `no entry ${keys.join(',')} of ${schema.join('/')}`);
    // RFC 7951 writes no empty list: the last entry gone, the member goes too.
    if (entries.length === 0 && present !== undefined) delete (parent as JsonObject)[step.name];
    return;
  }
  if (at >= 0 && operation === 'create') throw new PatchError(editId, `the entry ${keys.join(',')} of ${schema.join('/')} already exists`);
  if (at < 0) entries.push(structuredClone(element));
  else entries[at] = operation === 'merge' ? merge(entries[at], element, schema, lists, editId) : structuredClone(element);
  if (present === undefined) setMember(parent as JsonObject, step.name, entries);
};

/**
 * The configuration after `edits`, in order, with RFC 8072's meaning: `merge` (NETCONF merge:
 * containers member by member, list entries by key, missing containers created), `replace`
 * (the node becomes the value), `create` (refused when the node exists), `delete` (refused
 * when it does not), `remove` (deletes it when it exists). Atomic like a YANG Patch: the first
 * refused edit throws a {@link PatchError} naming it, and `config` is never changed (the
 * result is a copy). `insert` and `move` (user-ordered lists) are refused, and so are edits of
 * more than one device. List entries on the way to a target must exist.
 */
export const applyEdits = (config: unknown, edits: readonly YangPatchEdit[], lists: ListKeys): JsonObject => {
  let root = (isObject(config) ? structuredClone(config) : {}) as JsonObject;
  let device: string | undefined;
  for (const edit of edits) {
    const editId = edit['edit-id'];
    const target = parseTarget(edit.target, editId);
    if (device !== undefined && target.device !== device) throw new PatchError(editId, 'the edits name more than one device');
    device = target.device;
    if (edit.operation === 'insert' || edit.operation === 'move') throw new PatchError(editId, `${edit.operation} is not supported`);
    const { steps } = target;
    const last = steps.at(-1);
    if (last === undefined) {
      if (edit.operation === 'create') throw new PatchError(editId, 'the configuration already exists');
      const content = edit.operation === 'merge' || edit.operation === 'replace' ? contentOf(edit, 'config') : {};
      if (!isObject(content)) throw new PatchError(editId, 'the configuration must be an object');
      root = edit.operation === 'merge' ? (merge(root, content, [], lists, editId) as JsonObject) : structuredClone(content);
      continue;
    }
    const writes = edit.operation !== 'delete' && edit.operation !== 'remove';
    const parent = descend(root, steps.slice(0, -1), writes, lists, editId);
    applyAt(
      parent,
      last,
      steps.map((s) => s.name),
      edit,
      lists,
    );
  }
  return root;
};
