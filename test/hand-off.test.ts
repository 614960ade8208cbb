import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CommandOutput } from '../src/commands/command.js';
import { handOff } from '../src/commands/hand-off.js';
import { importCommand } from '../src/commands/import.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { loadConfig } from '../src/config.js';
import { readHolder, StoreHeldError } from '../src/db/embedded-lock.js';
import { openPglite } from '../src/db/open-pglite.js';
import { createLogger } from '../src/log.js';
import type { Services } from '../src/services.js';
import { startControlServer } from '../src/start/control-server.js';
import { startService } from '../src/start/start-service.js';
import { REPO } from './support/processes.js';

/** A stack frame line, which an interrupted hand-off must never print. */
const STACK_FRAME = /^\s+at .+/m;
const SECRET = 'test-secret';

/**
 * A stand-in for a server's command port: answers with `answer`, and reports when the
 * handing-off process went away.
 */
async function fakeControlServer(
  answer: (res: ServerResponse) => void,
): Promise<{ port: number; clientLeft: Promise<void>; server: Server }> {
  let left: () => void = () => {};
  const clientLeft = new Promise<void>((resolve) => (left = resolve));
  const server = createServer((req: IncomingMessage, res) => {
    req.resume();
    res.once('close', () => left());
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, clientLeft, server };
}

function recordingOutput(): CommandOutput & { err: (text: string) => void; errText: () => string } {
  let err = '';
  return { out: () => {}, err: (text) => void (err += text), progress: () => {}, errText: () => err };
}

describe('a hand-off that ends part-way', () => {
  let dir: string;
  let server: Server | undefined;
  const uncaught: unknown[] = [];
  const collect = (error: unknown) => uncaught.push(error);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-hand-off-'));
    process.on('uncaughtException', collect);
  });
  afterEach(async () => {
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
    server?.closeAllConnections();
    server = undefined;
  });
  afterAll(async () => {
    process.off('uncaughtException', collect);
    await rm(dir, { recursive: true, force: true });
  });

  it('ends with one clear line and exit 1, and no unhandled error, when the connection is cut mid-answer', async () => {
    const fake = await fakeControlServer((res) => {
      res.write(`${JSON.stringify({ progress: 'big.csv: validated 100000 rows' })}\n{"progress":"big.csv: valid`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    server = fake.server;
    const holder = {
      pid: process.pid,
      role: 'server' as const,
      label: 'npm start',
      controlPort: fake.port,
      secret: SECRET,
    };
    const output = recordingOutput();

    const code = await handOff(
      new StoreHeldError(join(dir, 'pglite'), holder),
      importCommand,
      { files: ['/big.csv'] },
      output,
      new AbortController().signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 100)); // late 'error' events would land here

    expect(code).toBe(1);
    const lines = output.errText().trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      /^import cut off \(.+\) before the server \(process \d+\) finished it: the server stops the import at its next row and rolls back the file it was on; files it had finished stay imported$/,
    );
    expect(output.errText()).not.toMatch(STACK_FRAME);
    expect(uncaught).toEqual([]);
  });

  it('says on Ctrl-C that the server rolls back the file it was on, exits 1 and prints no stack', async () => {
    // The server keeps answering (progress) until the client leaves, as during a long import.
    const fake = await fakeControlServer((res) => {
      const tick = setInterval(
        () => res.write(`${JSON.stringify({ progress: 'big.csv: validated 100000 rows' })}\n`),
        50,
      );
      res.once('close', () => clearInterval(tick));
    });
    server = fake.server;
    const folder = join(dir, 'held');
    // This test's process stands in for the server holding the folder.
    await writeFile(
      `${folder}.owner.json`,
      JSON.stringify({ pid: process.pid, role: 'server', label: 'npm start', controlPort: fake.port, secret: SECRET }),
      { mode: 0o600 },
    );
    const csv = join(dir, 'big.csv');
    await writeFile(csv, 'metric,project,date,value\n');

    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/commands/import.ts', csv], {
      cwd: REPO,
      env: { ...process.env, PGLITE_DIR: folder, DATABASE_URL: '' },
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.includes('running import there')) setTimeout(() => child.kill('SIGINT'), 200);
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    await fake.clientLeft;

    expect(code).toBe(1);
    expect(stderr).not.toMatch(STACK_FRAME);
    expect(stderr).not.toContain('Unhandled');
    // Off a terminal the progress line is printed as lines of its own; what else is said is one line.
    const said = stderr.split('\n').filter((l) => l !== '' && !l.startsWith('big.csv: validated'));
    expect(said).toEqual([
      `The server (process ${process.pid}) holds ${folder}; running import there.`,
      `import interrupted before the server (process ${process.pid}) finished ` +
        `it: the server stops the import at its next row and rolls back the file ` +
        `it was on; files it had finished stay imported`,
    ]);
  }, 60_000);
});

describe('the command port', () => {
  const uncaught: unknown[] = [];
  const collect = (error: unknown) => uncaught.push(error);
  beforeAll(() => void process.on('uncaughtException', collect));
  afterAll(() => void process.off('uncaughtException', collect));

  it('refuses a request without the secret, a malformed path included, and keeps running', async () => {
    // Nothing of the services is used before the secret is checked.
    const control = await startControlServer({} as Services, Promise.resolve(), SECRET);
    try {
      const base = `http://127.0.0.1:${control.port}`;
      // Any local process (or a web page in a local browser) can reach the port: a path
      // that is not valid percent-encoding threw URIError in the listener, which ended the server.
      for (const path of ['/commands/%E0', '/commands/%', '/commands/keys']) {
        const refused = await fetch(`${base}${path}`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(2_000),
        });
        expect(refused.status, path).toBe(403);
      }
      const malformed = await fetch(`${base}/commands/%E0`, {
        method: 'POST',
        headers: { 'x-control-secret': SECRET },
        body: '{}',
        signal: AbortSignal.timeout(2_000),
      });
      expect(malformed.status).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).toEqual([]);
    } finally {
      await control.close();
    }
  });
});

describe('a handed-over import when the server shuts down', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-hand-off-stop-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('is stopped after the grace period, rolled back whole, and its CLI is told so', async () => {
    const folder = join(dir, 'pglite');
    const config = loadConfig({
      PORT: '0',
      PGLITE_DIR: folder,
      SHUTDOWN_GRACE_SECONDS: '1',
      SEED_YEARS: '1',
      LOG_LEVEL: 'warn',
    });
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const running = await startService(config, createLogger(config, quiet));
    await running.ready;
    // 380,000 rows before 2014, where the sample data has none: many seconds of writing.
    const metric = CATALOG.byName.get('etf-aum-change-pct')!;
    const csv = join(dir, 'big.csv');
    const lines = ['metric,project,date,value'];
    for (let day = 0; day < 5_000; day += 1) {
      const date = new Date(Date.UTC(2000, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
      for (const slug of metric.projects) lines.push(`${metric.name},${slug},${date},${(day % 97) / 10}`);
    }
    await writeFile(csv, `${lines.join('\n')}\n`);

    let err = '';
    let writing: () => void = () => {};
    const written = new Promise<void>((resolve) => (writing = resolve));
    const output: CommandOutput = {
      out: () => {},
      err: (text) => void (err += text),
      progress: (text) => void (text.includes('written') && writing()),
    };
    const handed = handOff(
      new StoreHeldError(folder, readHolder(folder)!),
      importCommand,
      { files: [csv] },
      output,
      new AbortController().signal,
    );
    await written;
    const stopping = Date.now();
    await running.close();
    const stopSeconds = (Date.now() - stopping) / 1000;

    expect(await handed).toBe(1);
    expect(err).toContain(`${csv}: interrupted; nothing from this file was written`);
    expect(err).toContain(
      'the server is shutting down and stopped import: the server stops the ' +
        'import at its next row and rolls back the file it was on',
    );
    // The grace period, then the batch in hand: far less than the rest of the file.
    expect(stopSeconds).toBeLessThan(1 + 5);
    const store = await openPglite(folder);
    try {
      const [stored] = await store.query<{ n: number }>(
        `select count(*)::integer as n from point where day < '2014-01-01'`,
      );
      expect(stored!.n).toBe(0);
    } finally {
      await store.close();
    }
  }, 120_000);
});
