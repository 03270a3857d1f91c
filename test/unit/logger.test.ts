/**
 * The logger on its own: one JSON line per entry, levels, context, and the redaction of fields
 * whose names suggest a secret (the last line of defence before a secret reaches the logs).
 */
import { describe, expect, it, vi } from 'vitest';
import { isLogLevel, LOG_LEVELS, Logger, passes, type LogLevel } from '../../functions/platform/logger.js';

const capture = (level: LogLevel = 'debug', service = 'svc') => {
  const lines: string[] = [];
  const log = new Logger(service, level, (line) => lines.push(line));
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { log, lines, entries };
};

describe('redaction', () => {
  it.each([
    'password',
    'Password',
    'adminPassword',
    'pass',
    'passphrase',
    'secret',
    'clientSecret',
    'SECRET_ARN',
    'token',
    'accessToken',
    'authorization',
    'Authorization',
    'credential',
    'credentials',
    'cookie',
    'Set-Cookie',
  ])('redacts a field named %s, whatever its value', (name) => {
    const { log, entries } = capture();
    log.info('m', { [name]: 's3cret-value', other: 1 });
    log.info('m', { [name]: { nested: 's3cret-value' } });
    expect(entries()[0]).toMatchObject({ [name]: '[redacted]', other: 1 });
    expect(entries()[1]).toMatchObject({ [name]: '[redacted]' });
  });

  it('keeps fields whose names suggest no secret', () => {
    const { log, entries } = capture();
    const fields = { user: 'alice', adapter: 'lab', status: 200, path: '/x', ok: true, nothing: null };
    log.info('m', fields);
    expect(entries()[0]).toMatchObject(fields);
  });

  it('redacts inside nested objects and arrays', () => {
    const { log, lines, entries } = capture();
    log.warn('m', { request: { headers: { authorization: 'Bearer abc.def', accept: 'x' } }, list: [{ password: 'pw1', name: 'n' }, 'plain'] });
    expect(entries()[0]).toMatchObject({
      request: { headers: { authorization: '[redacted]', accept: 'x' } },
      list: [{ password: '[redacted]', name: 'n' }, 'plain'],
    });
    expect(lines.join('')).not.toMatch(/abc\.def|pw1/);
  });

  it('writes an error as its name and message only: no stack, no other properties', () => {
    const { log, entries } = capture();
    const error = Object.assign(new TypeError('boom'), { password: 'pw', $response: { body: 'raw' } });
    log.error('m', { error });
    expect(entries()[0]!['error']).toEqual({ name: 'TypeError', message: 'boom' });
  });

  it('redacts at any depth, and writes what is nested deeper than 32 levels as a marker, never as it is', () => {
    const { log, lines, entries } = capture();
    log.info('m', { a: { b: { c: { d: { password: 'x', e: { password: 'deep' } } } } } });
    const d = (entries()[0] as { a: { b: { c: { d: Record<string, unknown> } } } }).a.b.c.d;
    expect(d['password']).toBe('[redacted]');
    expect(d['e']).toEqual({ password: '[redacted]' });
    let nested: Record<string, unknown> = { password: 'deepest' };
    for (let i = 0; i < 40; i++) nested = { n: nested };
    log.info('m', nested);
    expect(lines[1]).toContain('[nested too deep]');
    expect(lines[1]).not.toContain('deepest');
  });

  it('does not change the fields it was given', () => {
    const { log } = capture();
    const fields = { password: 'pw', nested: { token: 't' } };
    log.info('m', fields);
    expect(fields).toEqual({ password: 'pw', nested: { token: 't' } });
  });
});

describe('entries', () => {
  it('are one JSON line each, with level, time, service, message, context and fields', () => {
    const { log, lines, entries } = capture('debug', 'netconfig-test');
    vi.useFakeTimers({ now: new Date('2026-01-02T03:04:05.678Z') });
    try {
      log.setContext({ correlationId: 'c-1', operation: 'op' });
      log.info('hello', { n: 1 });
    } finally {
      vi.useRealTimers();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(lines[0]!.indexOf('\n')).toBe(lines[0]!.length - 1);
    expect(entries()[0]).toEqual({
      level: 'info',
      timestamp: '2026-01-02T03:04:05.678Z',
      service: 'netconfig-test',
      message: 'hello',
      correlationId: 'c-1',
      operation: 'op',
      n: 1,
    });
  });

  it('replace the context on each setContext', () => {
    const { log, entries } = capture();
    log.setContext({ correlationId: 'a', extra: 1 });
    log.setContext({ correlationId: 'b' });
    log.debug('m');
    expect(entries()[0]).not.toHaveProperty('extra');
    expect(entries()[0]).toMatchObject({ correlationId: 'b', level: 'debug' });
  });

  it('are written at and above the level only', () => {
    const { log, entries } = capture('warn');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(entries().map((e) => e['level'])).toEqual(['warn', 'error']);
    log.setLevel('debug');
    log.debug('d');
    log.info('i');
    expect(entries().map((e) => e['message'])).toEqual(['w', 'e', 'd', 'i']);
    log.setLevel('error');
    log.warn('w2');
    expect(entries()).toHaveLength(4);
  });
});

describe('levels', () => {
  it('are the five names, and nothing else an object answers to', () => {
    for (const level of LOG_LEVELS) expect(isLogLevel(level)).toBe(true);
    for (const other of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'INFO', 'verbose', '']) expect(isLogLevel(other), other).toBe(false);
    for (const other of [20, null, undefined, ['info'], { toString: () => 'info' }]) expect(isLogLevel(other)).toBe(false);
  });

  it('pass a threshold at or below them, trace being the lowest', () => {
    expect(LOG_LEVELS.map((level) => LOG_LEVELS.filter((threshold) => passes(level, threshold)))).toEqual([
      ['error', 'warn', 'info', 'debug', 'trace'],
      ['warn', 'info', 'debug', 'trace'],
      ['info', 'debug', 'trace'],
      ['debug', 'trace'],
      ['trace'],
    ]);
  });

  it('write trace lines only under a trace threshold, the container level or one given per line', () => {
    const { log, entries } = capture('trace');
    log.trace('t1', { n: 1 });
    log.setLevel('debug');
    log.trace('t2');
    log.log('trace', 't3', undefined, 'trace');
    log.log('debug', 'd1', undefined, 'info');
    log.log('warn', 'w1', { password: 'x' }, 'info');
    expect(entries().map((e) => [e['level'], e['message']])).toEqual([
      ['trace', 't1'],
      ['trace', 't3'],
      ['warn', 'w1'],
    ]);
    expect(entries()[0]).toMatchObject({ n: 1 });
    expect(entries()[2]).toMatchObject({ password: '[redacted]' });
  });

  it('write to standard output by default', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    let calls: unknown[][];
    try {
      new Logger('svc', 'info').info('to stdout');
      calls = write.mock.calls;
    } finally {
      write.mockRestore();
    }
    expect(calls).toHaveLength(1);
    expect(JSON.parse(String(calls[0]![0]))).toMatchObject({ level: 'info', service: 'svc', message: 'to stdout' });
  });
});

describe('configuration', () => {
  it('refuses LOG_LEVEL=trace: trace is set per adapter, never for the container', () => {
    vi.stubEnv('LOG_LEVEL', 'trace');
    try {
      expect(() => new Logger('svc')).toThrow('configuration error: LOG_LEVEL must be one of debug, info, warn, error, got trace');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reads LOG_LEVEL case-insensitively and refuses an unknown one by name', () => {
    vi.stubEnv('LOG_LEVEL', 'ERROR');
    try {
      const lines: string[] = [];
      const log = new Logger('svc', undefined, (line) => lines.push(line));
      log.warn('w');
      log.error('e');
      expect(lines).toHaveLength(1);
      vi.stubEnv('LOG_LEVEL', 'verbose');
      expect(() => new Logger('svc')).toThrow(/LOG_LEVEL must be one of debug, info, warn, error, got verbose/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('writes info and above when LOG_LEVEL is unset or empty', () => {
    for (const value of [undefined, '']) {
      vi.stubEnv('LOG_LEVEL', value);
      try {
        const lines: string[] = [];
        const log = new Logger('svc', undefined, (line) => lines.push(line));
        log.debug('d');
        log.info('i');
        expect(lines.map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(['info']);
      } finally {
        vi.unstubAllEnvs();
      }
    }
  });

  it('names the service from SERVICE_NAME, netconfig by default', () => {
    vi.stubEnv('SERVICE_NAME', '');
    try {
      const lines: string[] = [];
      new Logger(undefined, 'info', (line) => lines.push(line)).info('m');
      vi.stubEnv('SERVICE_NAME', 'named');
      new Logger(undefined, 'info', (line) => lines.push(line)).info('m');
      expect(lines.map((l) => (JSON.parse(l) as { service: string }).service)).toEqual(['netconfig', 'named']);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
