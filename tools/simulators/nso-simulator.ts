/**
 * An NSO-like RESTCONF server for tests and local mode (registered there as adapter `lab-nso`).
 *
 * It keeps state: a `/restconf/data` tree holding `tailf-ncs:devices` with a few devices and
 * their config, so that GET after PATCH shows the change. It speaks enough RESTCONF (RFC 8040)
 * to be used the way NSO is: GET, PATCH (merge), PUT (replace or create), POST (create, 409
 * when it exists; or invoke a device action such as `sync-from`), DELETE; JSON in
 * `application/yang-data+json` or NSO's legacy `application/vnd.yang.data+json` (by Accept),
 * XML for `+xml` Accept types; basic auth; `ietf-restconf:errors` bodies.
 *
 * NSO's copy of each device's configuration (CDB, what `…/device=<d>/config` shows) is kept
 * apart from the device's own: they match until the device is changed "behind NSO's back"
 * ({@link NsoSimulator.drift}, or `POST /simulator/devices/<d>/drift` with a JSON merge body,
 * outside `/restconf`), or the fleet starts some devices out of sync (`outOfSyncEvery`). The sync
 * actions compare the two as NSO does: `check-sync` (per device, or `devices check-sync` with
 * the `device` leaf-list: `sync-result` per device), `compare-config` (a unified diff of the
 * pretty-printed JSON of NSO's copy against the device's; empty output when equal; NSO itself
 * answers its CLI diff) and `sync-from` (NSO takes the device's configuration). A write to a
 * device's configuration through RESTCONF is committed to the device too, as NSO does, unless
 * the device is out of sync (then only NSO's copy changes).
 *
 * Remediation's transactions (nso-transactions.ts): a YANG Patch on `/restconf/data` with
 * `dry-run=native` or committed with a rollback file, the rollback files and
 * `apply-rollback-file`; the `commitFailure` knob fails commits for named devices.
 *
 * Knobs let tests make it misbehave: delay, reset the connection, redirect, a huge body, a
 * forced 5xx, a slow drip, malformed JSON. It records every request (the Authorization value
 * redacted) and counts TCP connections, so tests can prove what was (not) sent and that
 * connections are reused.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createTwoFilesPatch } from 'diff';
import { fleetDrift, fleetEntries, fleetGroups, isSlow, type FleetSpec } from './nso-fleet.js';
import { createTransactions, TransactionRefused, type CommitFailureKnob, type RollbackFile } from './nso-transactions.js';

type Json = null | boolean | number | string | Json[] | { [member: string]: Json };
type JsonObject = { [member: string]: Json };

export interface NsoCredentials {
  readonly username: string;
  readonly password: string;
}

/** Misbehaviours, applied to every request until changed. */
export interface NsoKnobs {
  /** Wait this long before answering. */
  readonly delayMs?: number;
  /**
   * Answer only once this settles: a request held while a test acts, whatever the time it
   * takes (the test settles it; a closed connection ends the wait).
   */
  readonly hold?: Promise<unknown>;
  /** Destroy the connection instead of answering. */
  readonly reset?: boolean;
  /** Answer with this redirect. */
  readonly redirect?: { readonly status?: 301 | 302 | 303 | 307 | 308; readonly location: string };
  /** Answer 200 `application/yang-data+json` with a valid JSON body of this many bytes. */
  readonly hugeBodyBytes?: number;
  /** Send the huge body with its Content-Length (default: chunked, no length). */
  readonly hugeBodyDeclared?: boolean;
  /** Answer this status (e.g. 500, 503) with a RESTCONF error body. */
  readonly status?: number;
  /** Write the body in small chunks, one every `dripMs`. */
  readonly dripMs?: number;
  /** Declare `application/yang-data+json` but send a body that does not parse. */
  readonly malformedJson?: boolean;
  /**
   * Destroy a connection when a second request arrives on it, as a server that dropped an
   * idle keep-alive connection does (the client sees ECONNRESET on a reused socket).
   */
  readonly resetReusedConnections?: boolean;
  /** Answer the next `count` requests with `status` (429 or 503: "busy, come back later"), then serve normally. */
  readonly busy?: { readonly status: 429 | 503; readonly count: number };
  /**
   * Answer 200 `application/yang-data+json` with a valid `{"tailf-ncs:config":{"deep":[[…]]}}` that
   * nests `depth` levels in all, to requests whose path names `device` (every request without it).
   */
  readonly nestedBody?: { readonly depth: number; readonly device?: string };
  /** An orchestrator without the sync actions: `check-sync`, `compare-config` and `sync-from` answer this status (404 or 501). */
  readonly noSyncActions?: 404 | 501;
  /** Devices whose NED cannot check-sync (`true`: all): `check-sync` answers `unsupported`, compare-config still works. */
  readonly checkSyncUnsupported?: true | readonly string[];
  /**
   * Sync actions that fail: for `devices` (default all) and `actions` (default all three), answer
   * `status` when set (a 5xx), else NSO's own failure, as NSO answers an unreachable device:
   * check-sync `error` and sync-from `false`, both with `info`; compare-config 200 with only
   * `info` (no diff).
   */
  readonly syncFailure?: { readonly actions?: readonly SyncAction[]; readonly devices?: readonly string[]; readonly status?: number };
  /** Answer requests whose path and query `match` with this status and body (JSON): one bad page of a list, one odd device. */
  readonly answer?: { readonly match: (path: string) => boolean; readonly status: number; readonly body: string };
  /** Ignore the `offset` and `limit` query parameters, as an orchestrator without list paging would: every page is the whole list. */
  readonly ignorePaging?: boolean;
  /** Commits (YANG Patch, apply-rollback-file) touching these devices fail with NSO's error answer (see nso-transactions.ts). */
  readonly commitFailure?: CommitFailureKnob;
}

/** The sync actions the simulator implements. */
export type SyncAction = 'check-sync' | 'compare-config' | 'sync-from';
const SYNC_ACTIONS: ReadonlySet<string> = new Set<SyncAction>(['check-sync', 'compare-config', 'sync-from']);

/** One request as the simulator received it. */
export interface NsoRequestRecord {
  readonly method: string;
  /** Path and query, as sent on the request line. */
  readonly path: string;
  /** Lower-cased names; `authorization` keeps its scheme only (`Basic [redacted]`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The user that basic auth identified, if any. */
  readonly user?: string;
}

export interface NsoSimulatorOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default admin / admin. */
  readonly credentials?: NsoCredentials;
  /** Initial datastore (default {@link defaultNsoData}). */
  readonly data?: JsonObject;
  /** Serve HTTPS with this key and certificate (PEM). */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** How long idle keep-alive connections stay open (default 30 s). */
  readonly keepAliveTimeoutMs?: number;
  /** Adds a synthetic fleet to the devices (see nso-fleet.ts): deterministic, some slow. */
  readonly fleet?: FleetSpec;
}

export interface NsoSimulator {
  /** Origin, e.g. `http://127.0.0.1:41234`: what an adapter's `baseUrl` holds. */
  readonly url: string;
  readonly port: number;
  /** Every request received, oldest first. Tests may empty it (`requests.length = 0`). */
  readonly requests: NsoRequestRecord[];
  /** TCP connections accepted since start. */
  readonly connections: number;
  /** Requests being answered now, and the most ever at once (tests of concurrency caps). */
  readonly inFlight: number;
  readonly peakInFlight: number;
  readonly knobs: NsoKnobs;
  /** Replaces all knobs (`setKnobs({})` clears them). */
  setKnobs(knobs: NsoKnobs): void;
  /** A copy of the datastore. */
  data(): JsonObject;
  /** Restores the initial datastore (and the devices' own configurations). */
  resetData(): void;
  /** Changes device `name` behind NSO's back: merges `patch` into the device's own configuration. */
  drift(name: string, patch: JsonObject): void;
  /** The device's own configuration (what `sync-from` would take), or `undefined` for a device NSO does not know. */
  deviceConfig(name: string): JsonObject | undefined;
  /**
   * Sets NSO's device group `name`: the devices it lists (`device-name`) and the groups nested in
   * it (`device-group`); `undefined` deletes it. What an operator's `devices device-group` does.
   */
  setDeviceGroup(name: string, group: { readonly devices?: readonly string[]; readonly groups?: readonly string[] } | undefined): void;
  /** Sets what NSO knows of device `name`'s type: `platform/name` and the NED id (`device-type/cli/ned-id`). */
  setDeviceType(name: string, type: { readonly platform?: string; readonly ned?: string }): void;
  /** The rollback files the commits kept, oldest first. */
  rollbackFiles(): readonly RollbackFile[];
  /** Commits a YANG Patch as another NSO user would (`query`: its commit parameters); throws NSO's refusal. */
  commitAs(user: string, patch: unknown, query?: string): void;
  close(): Promise<void>;
}

/** Two devices with some config, as NSO shows them over RESTCONF. */
export const defaultNsoData = (): JsonObject => ({
  'tailf-ncs:devices': {
    authgroups: { group: [{ name: 'default', 'default-map': { 'remote-name': 'admin' } }] },
    device: [
      {
        name: 'ce0',
        address: '10.0.0.10',
        port: 22,
        authgroup: 'default',
        'device-type': { cli: { 'ned-id': 'cisco-ios-cli-6.100:cisco-ios-cli-6.100' } },
        platform: { name: 'ios', version: '15.6', model: 'CSR1000V' },
        state: { 'admin-state': 'unlocked' },
        config: {
          'tailf-ned-cisco-ios:hostname': 'ce0',
          'tailf-ned-cisco-ios:interface': {
            Loopback: [{ name: '0', description: 'router id', ip: { address: { primary: { address: '10.255.0.1', mask: '255.255.255.255' } } } }],
            GigabitEthernet: [{ name: '0/1', description: 'uplink to pe0' }],
          },
        },
      },
      {
        name: 'pe0',
        address: '10.0.0.20',
        port: 22,
        authgroup: 'default',
        'device-type': { cli: { 'ned-id': 'cisco-iosxr-cli-7.50:cisco-iosxr-cli-7.50' } },
        platform: { name: 'ios-xr', version: '7.5.2', model: 'NCS-5501' },
        state: { 'admin-state': 'unlocked' },
        config: {
          'tailf-ned-cisco-ios-xr:hostname': 'pe0',
          'tailf-ned-cisco-ios-xr:interface': {
            Loopback: [{ id: '0', description: 'router id' }],
          },
        },
      },
    ],
    // NSO's device groups: `device-name` lists devices, `device-group` nests groups.
    'device-group': [
      { name: 'access', 'device-name': ['ce0'] },
      { name: 'core', 'device-name': ['pe0'] },
      { name: 'lab', 'device-group': ['access', 'core'] },
    ],
  },
});

/** List keys by list name (local name); lists not named here are keyed by `name`. */
const LIST_KEYS: Readonly<Record<string, readonly string[]>> = { Loopback: ['name'], device: ['name'], group: ['name'] };
/** Device actions that POST can invoke (`.../device=ce0/sync-from`), and their output. */
const DEVICE_ACTIONS: Readonly<Record<string, JsonObject>> = {
  'sync-to': { result: true },
  connect: { result: true, info: '(admin) Connected to device - 127.0.0.1:22' },
};
const KNOWN_QUERY = new Set(['depth', 'fields', 'content', 'with-defaults', 'filter', 'insert', 'point', 'offset', 'limit']);
const YANG_JSON = 'application/yang-data+json';

class RestconfError extends Error {
  constructor(
    readonly status: number,
    readonly tag: string,
    message: string,
    readonly type: 'protocol' | 'application' = 'application',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const clone = <T>(value: T): T => structuredClone(value);
const localName = (member: string): string => member.slice(member.indexOf(':') + 1);
const moduleOf = (member: string): string | undefined => (member.includes(':') ? member.slice(0, member.indexOf(':')) : undefined);
const keysOf = (list: string): readonly string[] => LIST_KEYS[localName(list)] ?? ['name'];

/** The member of `node` a (possibly prefixed) name designates: exact, else by local name. */
const findMember = (node: JsonObject, name: string): string | undefined => {
  if (name in node) return name;
  const local = localName(name);
  return Object.keys(node).find((k) => localName(k) === local);
};

interface Segment {
  readonly name: string;
  readonly keys?: readonly string[];
}

/** `/restconf/data/a:b/c=k1,k2/d` → segments (keys percent-decoded). */
const parseSegments = (raw: string): Segment[] =>
  raw
    .split('/')
    .filter((s, i, all) => s !== '' || i < all.length - 1)
    .map((s) => {
      if (s === '') throw new RestconfError(400, 'malformed-message', 'empty path segment', 'protocol');
      const eq = s.indexOf('=');
      try {
        if (eq === -1) return { name: decodeURIComponent(s) };
        return {
          name: decodeURIComponent(s.slice(0, eq)),
          keys: s
            .slice(eq + 1)
            .split(',')
            .map((k) => decodeURIComponent(k)),
        };
      } catch {
        throw new RestconfError(400, 'malformed-message', 'bad percent-encoding in the path', 'protocol');
      }
    });

/** Where a path lands in the tree. */
interface Location {
  readonly parent: JsonObject;
  /** The member name as stored (or as it will be stored, when creating). */
  readonly member: string;
  readonly qname: string;
  readonly segment: Segment;
  /** For a list entry: its index, -1 when absent. */
  readonly index?: number;
  readonly value: Json | undefined;
}

/**
 * The index of the list entry whose keys are `keys`, or -1. A plain loop: a fleet's device list
 * has thousands of entries, and a callback per entry made every request allocate hundreds of
 * kilobytes, whose collection the process serving them (a test, the benchmark) paid for.
 */
const entryIndex = (list: readonly Json[], names: readonly string[], keys: readonly string[]): number => {
  entries: for (let i = 0; i < list.length; i++) {
    const entry = list[i];
    if (!isObject(entry)) continue;
    for (let j = 0; j < names.length; j++) {
      const value = entry[names[j]!];
      if ((typeof value === 'string' ? value : String(value)) !== keys[j]) continue entries;
    }
    return i;
  }
  return -1;
};

const locate = (root: JsonObject, segments: readonly Segment[]): Location => {
  let node: Json | undefined = root;
  let module = '';
  let location: Location | undefined;
  segments.forEach((segment, i) => {
    if (!isObject(node)) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
    const found = findMember(node, segment.name);
    const segmentModule = moduleOf(segment.name);
    // Stored names are qualified only where the module changes (RFC 7951).
    const member = found ?? (segmentModule && segmentModule !== module ? segment.name : localName(segment.name));
    module = segmentModule ?? moduleOf(member) ?? module;
    const qname = `${module}:${localName(member)}`;
    const value: Json | undefined = node[member];
    if (segment.keys) {
      const list: Json | undefined = value;
      const names = keysOf(member);
      if (segment.keys.length !== names.length) throw new RestconfError(400, 'invalid-value', `list ${localName(member)} has ${names.length} key(s)`);
      const index = Array.isArray(list) ? entryIndex(list, names, segment.keys) : -1;
      location = { parent: node, member, qname, segment, index, value: index >= 0 ? (list as Json[])[index] : undefined };
    } else {
      location = { parent: node, member, qname, segment, value };
    }
    if (location.value === undefined && i < segments.length - 1) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
    node = location.value;
  });
  if (!location) throw new RestconfError(400, 'invalid-value', 'no data node in the path');
  return location;
};

/** Deep merge (PATCH): containers merge, list entries merge by key, leaves are replaced. */
const merge = (target: JsonObject, patch: JsonObject): void => {
  for (const [name, value] of Object.entries(patch)) {
    const member = findMember(target, name) ?? name;
    const current = target[member];
    if (isObject(current) && isObject(value)) merge(current, value);
    else if (Array.isArray(current) && Array.isArray(value)) {
      const keys = keysOf(member);
      for (const entry of value) {
        const existing = isObject(entry) ? current.find((e) => isObject(e) && keys.every((k) => e[k] === entry[k])) : undefined;
        if (isObject(existing) && isObject(entry)) merge(existing, entry);
        else current.push(clone(entry));
      }
    } else target[member] = clone(value);
  }
};

/** The payload of PATCH/PUT/POST on `location`: `{ "<name>": value }` with a matching name. */
const payloadFor = (body: JsonObject, location: Location): Json => {
  const names = Object.keys(body);
  if (names.length !== 1 || localName(names[0]!) !== localName(location.member)) {
    throw new RestconfError(400, 'malformed-message', `the body must hold exactly one member, ${location.qname}`, 'protocol');
  }
  const value = body[names[0]!]!;
  if (!location.segment.keys) return value;
  const entry = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (!isObject(entry)) throw new RestconfError(400, 'malformed-message', `the body must hold one ${location.qname} entry`, 'protocol');
  keysOf(location.member).forEach((k, j) => {
    const key = location.segment.keys![j]!;
    if (entry[k] === undefined) entry[k] = key;
    else if (String(entry[k]) !== key) throw new RestconfError(400, 'invalid-value', `key leaf ${k} does not match the URI`);
  });
  return entry;
};

const wrap = (location: Location): JsonObject => ({
  [location.qname]: location.segment.keys ? [location.value ?? null] : (location.value ?? null),
});

/** A query parameter that must be a whole number from `min`; undefined when absent. */
const wholeParameter = (params: URLSearchParams, name: string, min: number): number | undefined => {
  const raw = params.get(name);
  if (raw === null) return undefined;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) throw new RestconfError(400, 'invalid-value', `${name} must be a whole number from ${min}`, 'protocol');
  return Number(raw);
};

/**
 * Only the members `fields` names (RFC 8040 4.8.3: `a;b`, `a/b`); nested groups `a(b;c)` are
 * refused, which the simulator does not need.
 */
const selectFields = (value: Json, fields: string): Json => {
  if (/[()]/.test(fields)) throw new RestconfError(400, 'invalid-value', 'nested field groups are not supported by the simulator', 'protocol');
  const paths = fields.split(';').map((f) => f.split('/').filter(Boolean));
  if (paths.some((p) => p.length === 0)) throw new RestconfError(400, 'invalid-value', 'fields has an empty path', 'protocol');
  const pick = (node: Json, path: readonly string[]): Json | undefined => {
    if (Array.isArray(node)) return node.map((entry) => pick(entry, path) ?? {});
    if (!isObject(node)) return undefined;
    const member = findMember(node, path[0]!);
    if (member === undefined) return undefined;
    if (path.length === 1) return { [member]: clone(node[member]!) };
    const inner = pick(node[member]!, path.slice(1));
    return inner === undefined ? undefined : { [member]: inner };
  };
  const combine = (a: Json | undefined, b: Json | undefined): Json | undefined => {
    if (a === undefined) return b;
    if (b === undefined) return a;
    if (Array.isArray(a) && Array.isArray(b)) return a.map((entry, i) => combine(entry, b[i]) ?? {});
    if (isObject(a) && isObject(b)) {
      const out: JsonObject = { ...a };
      for (const [k, v] of Object.entries(b)) out[k] = combine(out[k], v) ?? v;
      return out;
    }
    return b;
  };
  return paths.reduce<Json | undefined>((acc, path) => combine(acc, pick(value, path)), undefined) ?? (Array.isArray(value) ? value.map(() => ({})) : {});
};

/**
 * A GET's answer under NSO's partial responses: `offset` and `limit` take a window of a list's
 * entries (NSO's list paging, only on a list resource), `fields` the named members of each.
 */
const partial = (location: Location, params: URLSearchParams, ignorePaging: boolean): JsonObject => {
  const offset = wholeParameter(params, 'offset', 0);
  const limit = wholeParameter(params, 'limit', 1);
  const fields = params.get('fields');
  let value: Json = location.value ?? null;
  if (offset !== undefined || limit !== undefined) {
    if (!Array.isArray(value) || location.segment.keys)
      throw new RestconfError(400, 'invalid-value', 'offset and limit apply to a list resource only', 'protocol');
    if (!ignorePaging) value = value.slice(offset ?? 0, limit === undefined ? undefined : (offset ?? 0) + limit);
  }
  if (fields !== null) value = selectFields(value, fields);
  return { [location.qname]: location.segment.keys ? [value] : value };
};

const escapeXml = (s: string): string => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const toXml = (name: string, value: Json, parentModule = ''): string => {
  const module = moduleOf(name) ?? parentModule;
  const tag = localName(name);
  const ns = module !== parentModule ? ` xmlns="urn:${module}"` : '';
  if (Array.isArray(value)) return value.map((v) => toXml(name, v, parentModule)).join('');
  if (isObject(value))
    return `<${tag}${ns}>${Object.entries(value)
      .map(([k, v]) => toXml(k, v, module))
      .join('')}</${tag}>`;
  return `<${tag}${ns}>${value === null ? '' : escapeXml(String(value))}</${tag}>`;
};

/** The media type to answer in, from Accept; undefined when none is acceptable. */
const negotiate = (accept: string | undefined): { type: string; xml: boolean } | undefined => {
  const wanted = (accept ?? '*/*').split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  for (const type of wanted) {
    if (type === 'application/vnd.yang.data+json' || type === 'application/vnd.yang.collection+json') return { type, xml: false };
    if (type === YANG_JSON || type === 'application/json' || type === '*/*' || type === 'application/*') return { type: YANG_JSON, xml: false };
    if (type === 'application/yang-data+xml' || type === 'application/xml' || /^application\/vnd\.yang\.[a-z]+\+xml$/.test(type)) {
      return { type, xml: true };
    }
  }
  return undefined;
};

const errorBody = (error: RestconfError): string =>
  JSON.stringify({
    'ietf-restconf:errors': { error: [{ 'error-type': error.type, 'error-tag': error.tag, 'error-message': error.message }] },
  });

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

/** Starts the simulator; resolves once it listens. */
/** The device a request path names (`…/device=<name>/…`), decoded; undefined when none. */
const deviceOf = (path: string): string | undefined => {
  const encoded = /\/device=([^/?]+)/.exec(path)?.[1];
  return encoded === undefined ? undefined : decodeURIComponent(encoded);
};

/** A configuration answer nesting `depth` levels (at least 3), written as text: no walk of a value that deep survives. */
const nestedConfig = (depth: number): string => {
  const arrays = Math.max(1, depth - 2);
  return `{"tailf-ncs:config":{"deep":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`;
};

export const startNsoSimulator = async (options: NsoSimulatorOptions = {}): Promise<NsoSimulator> => {
  const credentials = options.credentials ?? { username: 'admin', password: 'admin' };
  const initial = options.data ?? defaultNsoData();
  const fleet = options.fleet;
  if (fleet) {
    const devices = (initial['tailf-ncs:devices'] as JsonObject | undefined)?.['device'];
    if (!Array.isArray(devices)) throw new Error('a fleet needs a datastore with tailf-ncs:devices/device');
    devices.push(...(fleetEntries(fleet) as Json[]));
    const store = initial['tailf-ncs:devices'] as JsonObject;
    store['device-group'] = [...(Array.isArray(store['device-group']) ? store['device-group'] : []), ...(fleetGroups(fleet) as Json[])];
  }
  let inFlight = 0;
  let peakInFlight = 0;
  let busyLeft = 0;
  let root: JsonObject = clone(initial);
  /** The devices' own configurations where they differ from NSO's copy (the others equal it). */
  const initialDrift = (): Map<string, JsonObject> => {
    const drifted = new Map<string, JsonObject>();
    if (!fleet) return drifted;
    for (const entry of deviceList()) {
      const patch = isObject(entry) && typeof entry['name'] === 'string' ? fleetDrift(fleet, entry['name']) : undefined;
      if (patch && isObject(entry) && isObject(entry['config'])) {
        const own = clone(entry['config']);
        merge(own, patch);
        drifted.set(entry['name'] as string, own);
      }
    }
    return drifted;
  };
  const deviceList = (): Json[] => {
    const list = (root['tailf-ncs:devices'] as JsonObject | undefined)?.['device'];
    return Array.isArray(list) ? list : [];
  };
  /**
   * The device entries by name, built when first needed after a write: the sync actions look up
   * each device of a group, and a scan of a fleet's list per device made them cost far more than a GET.
   */
  let byName: Map<string, JsonObject> | undefined;
  /** Device `name`'s entry in NSO's copy. */
  const deviceEntry = (name: string): JsonObject | undefined => {
    if (!byName) {
      byName = new Map();
      for (const entry of deviceList())
        if (isObject(entry) && typeof entry['name'] === 'string' && !byName.has(entry['name'])) byName.set(entry['name'], entry);
    }
    return byName.get(name);
  };
  let drifted = initialDrift();
  /** YANG Patch commits, dry-runs and rollback files (nso-transactions.ts). */
  const transactions = createTransactions({
    config: (name) => {
      const entry = deviceEntry(name);
      if (!entry) return undefined;
      if (!isObject(entry['config'])) entry['config'] = {};
      return entry['config'] as JsonObject;
    },
    setConfig: (name, config) => {
      deviceEntry(name)!['config'] = config;
    },
    outOfSync: (name) => drifted.has(name),
    commitFailure: () => knobs.commitFailure,
  });
  /** The device's own configuration: its drifted one, else NSO's copy. */
  const ownConfig = (name: string): JsonObject | undefined => {
    const entry = deviceEntry(name);
    if (!entry) return undefined;
    return drifted.get(name) ?? (isObject(entry['config']) ? entry['config'] : {});
  };
  const pretty = (value: Json | undefined): string => `${JSON.stringify(value ?? {}, null, 2)}\n`;

  /** What a sync knob says of `action` on `device`: a status to answer, an NSO failure, or nothing. */
  const failureOf = (action: SyncAction, device: string): { status?: number } | undefined => {
    const failure = knobs.syncFailure;
    if (!failure || !(failure.actions ?? [...SYNC_ACTIONS]).includes(action)) return undefined;
    if (failure.devices && !failure.devices.includes(device)) return undefined;
    return failure.status === undefined ? {} : { status: failure.status };
  };
  const unsupported = (device: string): boolean => {
    const knob = knobs.checkSyncUnsupported;
    return knob === true || (Array.isArray(knob) && knob.includes(device));
  };

  /** One device's answer to `action` (the members of its output), or an error to answer. */
  const deviceSync = (action: SyncAction, name: string): JsonObject => {
    const failure = failureOf(action, name);
    if (failure?.status) throw new RestconfError(failure.status, 'operation-failed', `${action} failed on the orchestrator`);
    const entry = deviceEntry(name);
    if (!entry) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
    const copy = isObject(entry['config']) ? entry['config'] : {};
    const own = ownConfig(name)!;
    switch (action) {
      case 'check-sync':
        if (failure) return { result: 'error', info: `Failed to connect to device ${name}: connection refused` };
        if (unsupported(name)) return { result: 'unsupported' };
        return { result: JSON.stringify(copy) === JSON.stringify(own) ? 'in-sync' : 'out-of-sync' };
      case 'sync-from':
        if (failure) return { result: false, info: `Failed to connect to device ${name}: connection refused` };
        entry['config'] = clone(own);
        drifted.delete(name);
        return { result: true };
      case 'compare-config': {
        if (failure) return { info: `Failed to connect to device ${name}: connection refused` };
        const [a, b] = [pretty(copy), pretty(own)];
        return a === b ? {} : { diff: createTwoFilesPatch(`nso/${name}`, `device/${name}`, a, b, undefined, undefined, { context: 2 }) };
      }
    }
  };

  /** `POST …/devices/<action>` (the `device` leaf-list) or `…/device=<d>/<action>`; `undefined` when the path is neither. */
  const syncAction = (segments: readonly Segment[], action: SyncAction, body: JsonObject): JsonObject | undefined => {
    if (knobs.noSyncActions) throw new RestconfError(knobs.noSyncActions, 'operation-not-supported', `no ${action} action`);
    const parent = segments[segments.length - 2];
    const input = body['input'] ?? body['tailf-ncs:input'] ?? {};
    if (!isObject(input)) throw new RestconfError(400, 'malformed-message', 'the input must be an object', 'protocol');
    if (segments.length === 3 && parent?.keys?.length === 1 && localName(parent.name) === 'device' && localName(segments[0]!.name) === 'devices') {
      return { 'tailf-ncs:output': deviceSync(action, parent.keys[0]!) };
    }
    if (segments.length !== 2 || localName(segments[0]!.name) !== 'devices' || action === 'compare-config') return undefined;
    const named = input['device'];
    if (named !== undefined && (!Array.isArray(named) || named.some((d) => typeof d !== 'string'))) {
      throw new RestconfError(400, 'invalid-value', 'device must be a list of device names');
    }
    const names = (named as string[] | undefined) ?? deviceList().map((e) => (isObject(e) ? String(e['name']) : ''));
    const unknown = names.find((d) => !deviceEntry(d));
    // A leafref to a device NSO does not have: the whole request is refused, as NSO does.
    if (unknown !== undefined) throw new RestconfError(400, 'invalid-value', `illegal reference: device ${unknown}`);
    // A failure status for any device named fails the whole request.
    const failing = names.map((d) => failureOf(action, d)?.status).find((code) => code !== undefined);
    if (failing !== undefined) throw new RestconfError(failing, 'operation-failed', `${action} failed on the orchestrator`);
    return {
      'tailf-ncs:output': {
        'sync-result': names.map((device): JsonObject => {
          try {
            return { device, ...deviceSync(action, device) };
          } catch (error) {
            return { device, result: action === 'sync-from' ? false : 'error', info: error instanceof Error ? error.message : String(error) };
          }
        }),
      },
    };
  };

  /** `POST /simulator/devices/<d>/drift`: the simulator's own route (no auth), outside RESTCONF. */
  const simulatorRoute = (method: string, path: string, rawBody: string): [number, Record<string, string>, string] | undefined => {
    const match = /^\/simulator\/devices\/([^/?]+)\/(drift|config)$/.exec(path);
    if (!match) return path.startsWith('/simulator/') ? [404, { 'Content-Type': 'application/json' }, '{"error":"no such simulator route"}'] : undefined;
    const name = decodeURIComponent(match[1]!);
    if (!deviceEntry(name)) return [404, { 'Content-Type': 'application/json' }, JSON.stringify({ error: `no device ${name}` })];
    if (match[2] === 'config' && method === 'GET') return [200, { 'Content-Type': 'application/json' }, JSON.stringify(ownConfig(name))];
    if (match[2] !== 'drift' || method !== 'POST') return [405, { 'Content-Type': 'application/json' }, '{"error":"method not allowed"}'];
    let patch: Json;
    try {
      patch = JSON.parse(rawBody) as Json;
    } catch {
      patch = null;
    }
    if (!isObject(patch))
      return [400, { 'Content-Type': 'application/json' }, '{"error":"the body must be a JSON object merged into the device\'s configuration"}'];
    drift(name, patch);
    return [200, { 'Content-Type': 'application/json' }, JSON.stringify(ownConfig(name))];
  };

  const setDeviceGroup: NsoSimulator['setDeviceGroup'] = (name, group) => {
    const store = root['tailf-ncs:devices'] as JsonObject;
    const groups = (Array.isArray(store['device-group']) ? store['device-group'] : []).filter((g) => !isObject(g) || g['name'] !== name);
    if (group)
      groups.push({ name, ...(group.devices ? { 'device-name': [...group.devices] } : {}), ...(group.groups ? { 'device-group': [...group.groups] } : {}) });
    store['device-group'] = groups;
  };
  const setDeviceType: NsoSimulator['setDeviceType'] = (name, type) => {
    const entry = deviceEntry(name);
    if (!entry) throw new Error(`the simulator has no device ${name}`);
    if (type.platform !== undefined) entry['platform'] = { ...(isObject(entry['platform']) ? entry['platform'] : {}), name: type.platform };
    if (type.ned !== undefined) entry['device-type'] = { cli: { 'ned-id': type.ned } };
  };

  const drift = (name: string, patch: JsonObject): void => {
    const own = ownConfig(name);
    if (!own) throw new Error(`the simulator has no device ${name}`);
    const changed = clone(own);
    merge(changed, patch);
    drifted.set(name, changed);
  };
  let knobs: NsoKnobs = {};
  let connections = 0;
  const requests: NsoRequestRecord[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const perSocket = new WeakMap<Socket, number>();

  /** True once `hold` settles, false if the connection closed first. */
  const released = (hold: Promise<unknown>, socket: Socket): Promise<boolean> =>
    new Promise((resolve) => {
      const onClose = (): void => resolve(false);
      socket.once('close', onClose);
      void hold.then(
        () => resolve(!socket.destroyed),
        () => resolve(!socket.destroyed),
      );
      void hold.finally(() => socket.off('close', onClose));
    });

  const later = (ms: number, socket: Socket): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        socket.off('close', onClose);
        resolve(true);
      }, ms);
      const onClose = (): void => {
        clearTimeout(timer);
        timers.delete(timer);
        resolve(false);
      };
      timers.add(timer);
      socket.once('close', onClose);
    });

  /** Writes a response, all at once or dripping when the knob says so. */
  const send = async (res: ServerResponse, status: number, headers: Record<string, string>, body: string): Promise<void> => {
    const drip = knobs.dripMs;
    if (!drip || body.length === 0) {
      res.writeHead(status, { ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) });
      res.end(body);
      return;
    }
    res.writeHead(status, headers);
    const bytes = Buffer.from(body);
    for (let offset = 0; offset < bytes.length; offset += 16) {
      if (res.destroyed) return;
      res.write(bytes.subarray(offset, offset + 16));
      if (!(await later(drip, res.socket!))) return;
    }
    res.end();
  };

  const sendError = (res: ServerResponse, error: RestconfError): Promise<void> =>
    send(res, error.status, { 'Content-Type': YANG_JSON, ...error.headers }, errorBody(error));

  const sendHuge = (res: ServerResponse, bytes: number): void => {
    // A valid JSON document of exactly `bytes` bytes: {"tailf-ncs:filler":"xxx…"}.
    const prefix = '{"tailf-ncs:filler":"';
    const suffix = '"}';
    const fill = Math.max(0, bytes - prefix.length - suffix.length);
    res.writeHead(200, { 'Content-Type': YANG_JSON, ...(knobs.hugeBodyDeclared ? { 'Content-Length': String(prefix.length + fill + suffix.length) } : {}) });
    res.write(prefix);
    const chunk = 'x'.repeat(64 * 1024);
    let left = fill;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const part = chunk.slice(0, Math.min(left, chunk.length));
        left -= part.length;
        if (!res.write(part)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end(suffix);
    };
    pump();
  };

  const authorize = (req: IncomingMessage): string => {
    const header = req.headers.authorization ?? '';
    const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const user = decoded.slice(0, colon);
    if (colon < 0 || user !== credentials.username || decoded.slice(colon + 1) !== credentials.password) {
      throw new RestconfError(401, 'access-denied', 'access denied', 'protocol', { 'WWW-Authenticate': 'Basic realm="restconf"' });
    }
    return user;
  };

  /** The data operations; returns status, headers and body. */
  const operate = (method: string, path: string, contentType: string | undefined, rawBody: string, accept: string | undefined) => {
    const url = new URL(path, 'http://nso.invalid');
    for (const key of url.searchParams.keys()) {
      if (!KNOWN_QUERY.has(key)) throw new RestconfError(400, 'invalid-value', `unknown query parameter ${key}`, 'protocol');
    }
    const answerAs = negotiate(accept);
    if (!answerAs) throw new RestconfError(406, 'invalid-value', 'no acceptable media type', 'protocol');
    const render = (status: number, value: JsonObject): [number, Record<string, string>, string] =>
      answerAs.xml
        ? [
            status,
            { 'Content-Type': answerAs.type },
            Object.entries(value)
              .map(([k, v]) => toXml(k, v))
              .join(''),
          ]
        : [status, { 'Content-Type': answerAs.type }, JSON.stringify(value)];

    if (url.pathname === '/restconf' || url.pathname === '/restconf/') {
      if (method !== 'GET') throw new RestconfError(405, 'operation-not-supported', 'method not allowed', 'protocol', { Allow: 'GET' });
      return render(200, { 'ietf-restconf:restconf': { data: {}, operations: {}, 'yang-library-version': '2019-01-04' } });
    }
    if (url.pathname !== '/restconf/data' && !url.pathname.startsWith('/restconf/data/')) {
      throw new RestconfError(404, 'invalid-value', 'uri path not found');
    }
    const segments = parseSegments(url.pathname.slice('/restconf/data'.length).replace(/^\//, ''));

    let body: JsonObject | undefined;
    if (method === 'PATCH' || method === 'PUT' || method === 'POST') {
      // An empty body needs no type (an action without input); anything else must be JSON.
      if (rawBody !== '' && !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? '')) {
        throw new RestconfError(415, 'invalid-value', 'the body must be JSON (application/yang-data+json)', 'protocol');
      }
      try {
        const parsed = JSON.parse(rawBody || '{}') as Json;
        if (!isObject(parsed)) throw new Error('not an object');
        body = parsed;
      } catch {
        throw new RestconfError(400, 'malformed-message', 'the body is not a JSON object', 'protocol');
      }
    }

    if (segments.length === 0) {
      if (method === 'GET') return render(200, { 'ietf-restconf:data': root });
      if (method === 'PATCH') {
        byName = undefined;
        merge(root, isObject(body!['ietf-restconf:data']) ? body!['ietf-restconf:data'] : body!);
        return [204, {}, ''] as [number, Record<string, string>, string];
      }
      throw new RestconfError(405, 'operation-not-supported', 'method not allowed on the datastore root', 'protocol', { Allow: 'GET, PATCH' });
    }

    const last = segments[segments.length - 1]!;
    if (method === 'POST' && SYNC_ACTIONS.has(localName(last.name)) && !last.keys) {
      const answer = syncAction(segments, localName(last.name) as SyncAction, body!);
      if (answer) return render(200, answer);
    }
    // A device action: POST …/device=<name>/<action>.

    const action = DEVICE_ACTIONS[localName(last.name)];
    if (method === 'POST' && action && !last.keys) {
      const parent = locate(root, segments.slice(0, -1));
      if (localName(parent.member) === 'device' && parent.segment.keys && parent.value !== undefined) {
        return render(200, { 'tailf-ncs:output': action });
      }
    }

    // A write may add, replace or remove device entries (the actions above change none).
    if (method !== 'GET') byName = undefined;
    const location = locate(root, segments);
    switch (method) {
      case 'GET':
        if (location.value === undefined) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
        return render(200, url.search ? partial(location, url.searchParams, knobs.ignorePaging === true) : wrap(location));
      case 'DELETE':
        if (location.value === undefined) throw new RestconfError(404, 'data-missing', 'the data node does not exist');
        if (location.index !== undefined) (location.parent[location.member] as Json[]).splice(location.index, 1);
        else delete location.parent[location.member];
        return [204, {}, ''] as [number, Record<string, string>, string];
      case 'PATCH': {
        if (location.value === undefined) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
        const value = payloadFor(body!, location);
        if (isObject(location.value) && isObject(value)) merge(location.value, value);
        else if (location.index !== undefined) throw new RestconfError(400, 'invalid-value', 'a list entry is merged with an object');
        else location.parent[location.member] = clone(value);
        return [204, {}, ''] as [number, Record<string, string>, string];
      }
      case 'PUT': {
        const value = clone(payloadFor(body!, location));
        const created = location.value === undefined;
        if (location.index === undefined) location.parent[location.member] = value;
        else {
          const list = Array.isArray(location.parent[location.member]) ? (location.parent[location.member] as Json[]) : [];
          if (location.index >= 0) list[location.index] = value;
          else list.push(value);
          location.parent[location.member] = list;
        }
        return [created ? 201 : 204, {}, ''] as [number, Record<string, string>, string];
      }
      case 'POST': {
        if (!isObject(location.value)) throw new RestconfError(404, 'invalid-value', 'uri keypath not found');
        const target = location.value;
        const names = Object.keys(body!);
        if (names.length !== 1) throw new RestconfError(400, 'malformed-message', 'the body must hold exactly one child to create', 'protocol');
        const name = names[0]!;
        const value = body![name]!;
        const member = findMember(target, name) ?? name;
        const existing = target[member];
        const isList = Array.isArray(existing) || Array.isArray(value);
        let created = `${url.pathname}/${encodeURIComponent(localName(name))}`;
        if (isList) {
          const entries = Array.isArray(value) ? value : [value];
          const keys = keysOf(member);
          const list = Array.isArray(existing) ? existing : [];
          for (const entry of entries) {
            if (!isObject(entry) || keys.some((k) => entry[k] === undefined)) {
              throw new RestconfError(400, 'missing-element', `each ${localName(name)} entry needs its key ${keys.join(', ')}`, 'protocol');
            }
            if (list.some((e) => isObject(e) && keys.every((k) => e[k] === entry[k]))) {
              throw new RestconfError(409, 'data-exists', `${localName(name)} ${keys.map((k) => String(entry[k])).join(',')} already exists`);
            }
          }
          list.push(...clone(entries));
          target[member] = list;
          const first = entries[0] as JsonObject;
          created += `=${keys.map((k) => encodeURIComponent(String(first[k]))).join(',')}`;
        } else {
          if (existing !== undefined) throw new RestconfError(409, 'data-exists', `${localName(name)} already exists`);
          target[member] = clone(value);
        }
        return [201, { Location: created }, ''] as [number, Record<string, string>, string];
      }
      default:
        throw new RestconfError(405, 'operation-not-supported', 'method not allowed', 'protocol', { Allow: 'GET, POST, PUT, PATCH, DELETE' });
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      headers[name] = name === 'authorization' ? `${text.split(' ')[0]} [redacted]` : text;
    }
    const record: { -readonly [K in keyof NsoRequestRecord]: NsoRequestRecord[K] } = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers,
      body: rawBody,
    };
    requests.push(record);
    const socket = req.socket;
    const own = simulatorRoute(record.method, record.path, rawBody);
    if (own) {
      await send(res, ...own);
      return;
    }

    const served = (perSocket.get(socket) ?? 0) + 1;
    perSocket.set(socket, served);
    if (knobs.reset || (knobs.resetReusedConnections && served > 1)) {
      socket.destroy();
      return;
    }
    if (knobs.delayMs && !(await later(knobs.delayMs, socket))) return;
    if (knobs.hold && !(await released(knobs.hold, socket))) return;
    if (fleet?.slowEvery) {
      const device = deviceOf(record.path);
      if (device && isSlow(fleet, device) && !(await later(fleet.slowMs ?? 200, socket))) return;
    }
    if (busyLeft > 0) {
      busyLeft--;
      await sendError(res, new RestconfError(knobs.busy!.status, 'resource-denied', 'too many requests, retry later', 'protocol', { 'Retry-After': '1' }));
      return;
    }
    if (knobs.redirect) {
      await send(res, knobs.redirect.status ?? 302, { Location: knobs.redirect.location, 'Content-Type': 'text/plain' }, 'moved');
      return;
    }
    if (knobs.status) {
      await sendError(res, new RestconfError(knobs.status, 'operation-failed', 'the simulator was told to fail'));
      return;
    }
    if (knobs.nestedBody && (knobs.nestedBody.device === undefined || deviceOf(record.path) === knobs.nestedBody.device)) {
      await send(res, 200, { 'Content-Type': YANG_JSON }, nestedConfig(knobs.nestedBody.depth));
      return;
    }
    if (knobs.hugeBodyBytes !== undefined) {
      sendHuge(res, knobs.hugeBodyBytes);
      return;
    }
    if (knobs.answer?.match(record.path)) {
      await send(res, knobs.answer.status, { 'Content-Type': YANG_JSON }, knobs.answer.body);
      return;
    }
    if (knobs.malformedJson) {
      await send(res, 200, { 'Content-Type': YANG_JSON }, '{"tailf-ncs:devices": {"device": [');
      return;
    }
    try {
      record.user = authorize(req);
      const url = new URL(record.path, 'http://nso.invalid');
      const [status, answerHeaders, body] =
        transactions.handle(record.method, url.pathname, url.search, req.headers['content-type'], rawBody, record.user) ??
        operate(record.method, record.path, req.headers['content-type'], rawBody, req.headers.accept);
      await send(res, status, answerHeaders, body);
    } catch (error) {
      if (error instanceof RestconfError) await sendError(res, error);
      else if (error instanceof TransactionRefused) await sendError(res, new RestconfError(error.status, error.tag, error.message));
      else await sendError(res, new RestconfError(500, 'operation-failed', 'internal error'));
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    handle(req, res)
      .catch(() => res.destroy())
      .finally(() => inFlight--);
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createHttpServer(listener);
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 30_000;
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A TLS handshake failure (the client does not trust us) is expected in tests: not a crash.
  server.on('tlsClientError', () => undefined);
  server.on('clientError', (_error, socket: Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    get knobs() {
      return knobs;
    },
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peakInFlight;
    },
    setKnobs(next) {
      knobs = { ...next };
      busyLeft = next.busy?.count ?? 0;
    },
    data: () => clone(root),
    resetData() {
      root = clone(initial);
      byName = undefined;
      drifted = initialDrift();
      transactions.reset();
    },
    drift,
    setDeviceGroup,
    setDeviceType,
    deviceConfig: (name) => {
      const own = ownConfig(name);
      return own === undefined ? undefined : clone(own);
    },
    rollbackFiles: () => transactions.files(),
    commitAs: (user, patch, query) => void transactions.commitAs(user, patch, query),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};
