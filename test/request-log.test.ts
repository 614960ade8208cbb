import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger, createRequestLog, type RequestLine } from '../src/log.js';
import { startService } from '../src/start/start-service.js';
import { gatherLines } from '../src/log-blocks.js';
import { until } from './support/poll.js';

/** A logger writing into an array of lines, as the service's would write to standard output. */
function capture(logLevel: 'info' | 'warn') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ logLevel }, sink), lines };
}

const CASES: RequestLine[] = [
  {
    requestId: 'b3c0c6a4-5a1e-4f57-8e1b-2f0e1c9d8a77',
    method: 'GET',
    route: '/v1/metrics/:name',
    status: 200,
    ms: Math.PI,
  },
  { requestId: 'b3c0c6a4-5a1e-4f57-8e1b-2f0e1c9d8a77', method: 'HEAD', route: 'unmatched', status: 404, ms: 0.000123 },
  { requestId: 'x"y\\z', method: 'M"\u0001', route: '/a"b', status: 503, ms: 12 },
  {
    requestId: 'b3c0c6a4-5a1e-4f57-8e1b-2f0e1c9d8a77',
    method: 'GET',
    route: '/v1/export',
    status: 200,
    outcome: 'given up',
    ms: 60_001.25,
  },
  {
    requestId: 'b3c0c6a4-5a1e-4f57-8e1b-2f0e1c9d8a77',
    method: 'GET',
    route: '/v1/metrics/:name',
    status: 499,
    outcome: 'aborted',
    ms: 4.5,
  },
];

describe('the request log line', () => {
  afterEach(() => vi.useRealTimers());

  it('is byte for byte what pino writes for the same fields', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 2, 10, 12, 0, 0, 7), toFake: ['Date'] });
    const ours = capture('info');
    const theirs = capture('info');
    const logRequest = createRequestLog(ours.logger);
    for (const line of CASES) {
      logRequest(line);
      theirs.logger.info({ ...line }, 'request');
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(ours.lines).toHaveLength(CASES.length);
    expect(ours.lines).toEqual(theirs.lines);
    expect(JSON.parse(ours.lines[2]!)).toMatchObject({
      level: 30,
      time: Date.UTC(2026, 2, 10, 12, 0, 0, 7),
      method: 'M"\u0001',
      route: '/a"b',
      msg: 'request',
    });
  });

  it("follows the logger's level, also when it changes", async () => {
    const { logger, lines } = capture('warn');
    const logRequest = createRequestLog(logger);
    logRequest(CASES[0]!);
    logger.level = 'info';
    logRequest(CASES[1]!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => (JSON.parse(l) as RequestLine).status)).toEqual([404]);
  });
});

describe('log lines gathered into blocks', () => {
  it('hands every line on in order, a block at a time, and the rest on flushSync', () => {
    const written: string[] = [];
    let flushed = 0;
    const blocks = gatherLines({ write: (text) => (written.push(text), true), flushSync: () => (flushed += 1) }, 100);
    const lines = Array.from({ length: 25 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 7)}"}\n`);
    for (const line of lines) blocks.write(line);
    expect(written.length).toBeGreaterThan(3);
    expect(written.every((block) => block.length >= 100)).toBe(true);
    expect(written.join('').length).toBeLessThan(lines.join('').length);
    blocks.flushSync();
    expect(written.join('')).toBe(lines.join(''));
    expect(flushed).toBe(1);
    blocks.flushSync();
    expect(written.join('')).toBe(lines.join(''));
  });

  it('hands on what it holds on flush without asking the sink to sync', () => {
    const written: string[] = [];
    let flushed = 0;
    const blocks = gatherLines({ write: (text) => (written.push(text), true), flushSync: () => (flushed += 1) }, 4096);
    blocks.write('{"a":1}\n');
    blocks.write('{"b":2}\n');
    expect(written).toEqual([]);
    blocks.flush();
    expect(written).toEqual(['{"a":1}\n{"b":2}\n']);
    blocks.flush();
    expect(written).toHaveLength(1);
    expect(flushed).toBe(0);
  });
});

describe('error fields of log lines', () => {
  it("name the cause of a start-up that cannot reach the database, never the URL's password", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    // Nothing listens on port 1: each attempt fails with ECONNREFUSED.
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: 'postgres://someone:pw-never-logged@127.0.0.1:1/db',
      CONNECT_TIMEOUT_SECONDS: '1',
    });
    const running = await startService(config, createLogger(config, sink));
    try {
      await until('a retry logged', () => lines.some((l) => l.includes('database not ready')));
    } finally {
      await running.close();
    }
    const retry = lines
      .map((l) => JSON.parse(l) as { msg: string; err?: Record<string, unknown> })
      .find((l) => l.msg === 'database not ready; retrying');
    // The error was described twice (once by the caller, once by the logger's serializer): "[object Object]".
    expect(retry?.err).toMatchObject({ code: 'ECONNREFUSED', message: expect.stringContaining('ECONNREFUSED') });
    expect(lines.join('\n')).not.toContain('pw-never-logged');
  });
});
