/**
 * A loopback EventBridge Scheduler: the schedule operations of the service's REST-JSON API as the
 * AWS SDK sends them (CreateSchedule `POST /schedules/{Name}`, UpdateSchedule `PUT`, GetSchedule
 * `GET` and DeleteSchedule `DELETE` with `?groupName=`, ListSchedules `GET /schedules`), its
 * errors as AWS answers them (`x-amzn-errortype` and `{"Message"}`: ResourceNotFoundException
 * 404, ConflictException 409, ValidationException 400), and the schedules kept in a JSON file so
 * a restart keeps them. It only stores: the local stack fires what it stores
 * (tools/local/scheduler-firing.ts). Groups are those it is started with, and `default`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { checkSchedule } from '../../functions/plans/schedule-expression.js';

/** A schedule as GetSchedule answers it (dates as ISO strings here, epoch seconds on the wire). */
export interface StoredSchedule {
  readonly Arn: string;
  readonly Name: string;
  readonly GroupName: string;
  readonly ScheduleExpression: string;
  readonly ScheduleExpressionTimezone?: string;
  readonly State: 'ENABLED' | 'DISABLED';
  readonly Description?: string;
  readonly FlexibleTimeWindow: { readonly Mode: 'OFF' | 'FLEXIBLE'; readonly MaximumWindowInMinutes?: number };
  readonly Target: { readonly Arn: string; readonly RoleArn: string; readonly Input?: string } & Record<string, unknown>;
  readonly CreationDate: string;
  readonly LastModificationDate: string;
}

export interface SchedulerSimulatorOptions {
  /** The JSON file the schedules are kept in (created when absent). */
  readonly file: string;
  /** Schedule groups besides `default`. */
  readonly groups?: readonly string[];
  readonly region?: string;
  readonly accountId?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** The clock of creation and modification dates; default the machine's. */
  readonly now?: () => Date;
}

export interface SchedulerSimulator {
  /** The endpoint, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The schedules stored now, every group. */
  schedules(): StoredSchedule[];
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: 'ResourceNotFoundException' | 'ConflictException' | 'ValidationException',
    message: string,
  ) {
    super(message);
  }
}
const STATUS = { ResourceNotFoundException: 404, ConflictException: 409, ValidationException: 400 } as const;

const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
const MAX_BODY = 1 << 20;

/** The schedules of a store file; none when it does not exist yet. */
export const readScheduleStore = (file: string): StoredSchedule[] => {
  if (!existsSync(file)) return [];
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: number; schedules?: StoredSchedule[] };
  if (parsed.version !== 1 || !Array.isArray(parsed.schedules)) throw new Error(`${file} is not a schedule store (version 1)`);
  return parsed.schedules;
};

const validTimezone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** The fields of a Create/UpdateSchedule body, checked as the service checks them. */
const scheduleFields = (body: Record<string, unknown>) => {
  const bad = (message: string): never => {
    throw new ApiError('ValidationException', message);
  };
  const expression = body['ScheduleExpression'];
  if (typeof expression !== 'string' || !expression) bad('ScheduleExpression is required');
  const zone = body['ScheduleExpressionTimezone'];
  if (zone !== undefined && (typeof zone !== 'string' || !validTimezone(zone))) bad(`Invalid time zone: ${String(zone)}`);
  const checked = checkSchedule(expression as string, (zone as string | undefined) ?? 'UTC');
  if (!checked.ok) bad(`Invalid Schedule Expression ${String(expression)}: ${checked.message}`);
  const window = body['FlexibleTimeWindow'] as StoredSchedule['FlexibleTimeWindow'] | undefined;
  if (!window || (window.Mode !== 'OFF' && window.Mode !== 'FLEXIBLE')) bad('FlexibleTimeWindow.Mode is OFF or FLEXIBLE');
  if (window!.Mode === 'FLEXIBLE' && !(Number(window!.MaximumWindowInMinutes) >= 1)) bad('MaximumWindowInMinutes is required for a FLEXIBLE window');
  const target = body['Target'] as StoredSchedule['Target'] | undefined;
  if (!target || typeof target.Arn !== 'string' || typeof target.RoleArn !== 'string') bad('Target.Arn and Target.RoleArn are required');
  const state = body['State'] ?? 'ENABLED';
  if (state !== 'ENABLED' && state !== 'DISABLED') bad('State is ENABLED or DISABLED');
  const description = body['Description'];
  return {
    ScheduleExpression: expression as string,
    ...(typeof zone === 'string' ? { ScheduleExpressionTimezone: zone } : {}),
    State: state as StoredSchedule['State'],
    ...(typeof description === 'string' ? { Description: description } : {}),
    FlexibleTimeWindow: window!,
    Target: target!,
  };
};

/** Epoch seconds, as the REST-JSON protocol writes timestamps. */
const wire = (s: StoredSchedule) => ({
  ...s,
  CreationDate: Date.parse(s.CreationDate) / 1000,
  LastModificationDate: Date.parse(s.LastModificationDate) / 1000,
});

/** Starts the simulator on 127.0.0.1. */
export const startSchedulerSimulator = async (o: SchedulerSimulatorOptions): Promise<SchedulerSimulator> => {
  const region = o.region ?? 'us-east-1';
  const accountId = o.accountId ?? '000000000000';
  const now = o.now ?? (() => new Date());
  const groups = new Set(['default', ...(o.groups ?? [])]);
  const key = (group: string, name: string) => `${group}/${name}`;
  const store = new Map(readScheduleStore(o.file).map((s) => [key(s.GroupName, s.Name), s]));
  const save = () => {
    mkdirSync(path.dirname(o.file), { recursive: true });
    const temporary = `${o.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ version: 1, schedules: [...store.values()] }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, o.file);
  };
  const groupOf = (value: unknown): string => {
    const group = typeof value === 'string' && value ? value : 'default';
    if (!groups.has(group)) throw new ApiError('ResourceNotFoundException', `Schedule group ${group} does not exist.`);
    return group;
  };
  const existing = (group: string, name: string): StoredSchedule => {
    const found = store.get(key(group, name));
    if (!found) throw new ApiError('ResourceNotFoundException', `Schedule ${name} does not exist.`);
    return found;
  };

  const handle = (method: string, url: URL, body: Record<string, unknown>): unknown => {
    const match = /^\/schedules(?:\/([^/]+))?$/.exec(url.pathname);
    if (!match) throw new ApiError('ValidationException', `No operation at ${method} ${url.pathname}`);
    if (match[1] === undefined) {
      if (method !== 'GET') throw new ApiError('ValidationException', `No operation at ${method} /schedules`);
      return list(url.searchParams);
    }
    const name = decodeURIComponent(match[1]);
    if (!NAME.test(name)) throw new ApiError('ValidationException', `Invalid schedule name ${name}`);
    switch (method) {
      case 'POST': {
        const group = groupOf(body['GroupName']);
        if (store.has(key(group, name))) throw new ApiError('ConflictException', `Schedule ${name} already exists.`);
        const at = now().toISOString();
        const arn = `arn:aws:scheduler:${region}:${accountId}:schedule/${group}/${name}`;
        store.set(key(group, name), { Arn: arn, Name: name, GroupName: group, ...scheduleFields(body), CreationDate: at, LastModificationDate: at });
        save();
        return { ScheduleArn: arn };
      }
      case 'PUT': {
        const group = groupOf(body['GroupName']);
        const before = existing(group, name);
        store.set(key(group, name), {
          Arn: before.Arn,
          Name: name,
          GroupName: group,
          ...scheduleFields(body),
          CreationDate: before.CreationDate,
          LastModificationDate: now().toISOString(),
        });
        save();
        return { ScheduleArn: before.Arn };
      }
      case 'GET':
        return wire(existing(groupOf(url.searchParams.get('groupName')), name));
      case 'DELETE': {
        const group = groupOf(url.searchParams.get('groupName'));
        existing(group, name);
        store.delete(key(group, name));
        save();
        return {};
      }
      default:
        throw new ApiError('ValidationException', `No operation at ${method} ${url.pathname}`);
    }
  };

  const list = (q: URLSearchParams) => {
    const max = q.has('MaxResults') ? Number(q.get('MaxResults')) : 100;
    if (!Number.isInteger(max) || max < 1 || max > 100) throw new ApiError('ValidationException', 'MaxResults is from 1 to 100');
    const group = q.get('ScheduleGroup');
    const prefix = q.get('NamePrefix') ?? '';
    const state = q.get('State');
    const after = q.has('NextToken') ? Buffer.from(q.get('NextToken')!, 'base64url').toString() : '';
    const matching = [...store.values()]
      .filter((s) => (!group || s.GroupName === group) && s.Name.startsWith(prefix) && (!state || s.State === state))
      .map((s) => ({ s, k: key(s.GroupName, s.Name) }))
      .sort((a, b) => (a.k < b.k ? -1 : 1))
      .filter(({ k }) => k > after);
    const page = matching.slice(0, max);
    return {
      Schedules: page.map(({ s }) => {
        const w = wire(s);
        return {
          Arn: w.Arn,
          Name: w.Name,
          GroupName: w.GroupName,
          State: w.State,
          CreationDate: w.CreationDate,
          LastModificationDate: w.LastModificationDate,
          Target: { Arn: w.Target.Arn },
        };
      }),
      ...(matching.length > max ? { NextToken: Buffer.from(page.at(-1)!.k).toString('base64url') } : {}),
    };
  };

  const answer = (res: ServerResponse, status: number, body: unknown, type?: string) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...(type ? { 'x-amzn-errortype': type } : {}) });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        if (size > MAX_BODY) throw new ApiError('ValidationException', 'Request body too large');
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> = {};
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          throw new ApiError('ValidationException', 'Request body is not JSON');
        }
        answer(res, 200, handle(req.method ?? 'GET', new URL(req.url ?? '/', 'http://localhost'), body));
      } catch (error) {
        if (error instanceof ApiError) answer(res, STATUS[error.type], { Message: error.message }, error.type);
        else answer(res, 500, { Message: (error as Error).message }, 'InternalServerException');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    schedules: () => [...store.values()],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
};
