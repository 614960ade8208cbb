import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyVerifier, hashApiKey, KEY_CACHE_MS } from '../src/auth/api-keys.js';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/db/open-pglite.js';
import { createLogger } from '../src/log.js';
import { startService, type RunningService } from '../src/start/start-service.js';
import { createScratchDatabase, TEST_DATABASE_URL, type ScratchDatabase } from './support/stores.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What a generated key looks like: `mk_` and 32 random bytes in base64url. */
const KEY_SHAPE = /^mk_[A-Za-z0-9_-]{43}$/;
/** A stack frame line, which an expected failure must never print. */
const STACK_FRAME = /^\s+at .+/m;

interface Run {
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Where the CLI's store is and whether a key works there; each kind of store brings its own. */
interface Target {
  name: 'pglite' | 'postgres';
  available: boolean;
  setUp(): Promise<{
    env: Record<string, string>;
    accepts(key: string): Promise<boolean>;
    logText(): string;
    tearDown(): Promise<void>;
  }>;
}

const TARGETS: readonly Target[] = [
  {
    // One process at a time may open a PGlite folder, so the key is checked between CLI runs.
    name: 'pglite',
    available: true,
    setUp: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'metrics-keys-'));
      const pgliteDir = join(dir, 'pglite');
      return {
        env: { PGLITE_DIR: pgliteDir },
        accepts: async (key) => {
          const store = await openPglite(pgliteDir);
          try {
            return (await createKeyVerifier(store, []).verify(key)) !== undefined;
          } finally {
            await store.close();
          }
        },
        logText: () => '',
        tearDown: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    // The real server is shared, so a running service sees what the CLI does while it runs.
    name: 'postgres',
    available: TEST_DATABASE_URL !== undefined,
    setUp: async () => {
      const db: ScratchDatabase = await createScratchDatabase(TEST_DATABASE_URL!);
      const lines: string[] = [];
      let running: RunningService | undefined;
      try {
        const config = loadConfig({ PORT: '0', DATABASE_URL: db.url, LOG_LEVEL: 'info' });
        const sink = new Writable({
          write(chunk, _enc, done) {
            lines.push(String(chunk));
            done();
          },
        });
        running = await startService(config, createLogger(config, sink));
      } catch (error) {
        await db.drop();
        throw error;
      }
      const service = running;
      return {
        env: { DATABASE_URL: db.url },
        accepts: async (key) => {
          const res = await fetch(`${service.url}/v1/openapi.json`, { headers: { 'x-api-key': key } });
          await res.arrayBuffer();
          if (res.status !== 200 && res.status !== 401) throw new Error(`expected 200 or 401, got ${res.status}`);
          return res.status === 200;
        },
        logText: () => lines.join(''),
        tearDown: async () => {
          await service.close();
          await db.drop();
        },
      };
    },
  },
];

describe('usage errors', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-keys-usage-'));
  });

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('print the usage and exit 2 without opening a store', { timeout: 60_000 }, async () => {
    const env = { PGLITE_DIR: join(dir, 'never-opened') };
    const cases = [
      { args: [], says: 'no command given' },
      { args: ['frob'], says: 'unknown command "frob"' },
      { args: ['create'], says: 'create needs --name' },
      { args: ['create', '--name', 'has space'], says: 'invalid key name "has space"' },
      { args: ['create', '--name', 'x'.repeat(65)], says: 'invalid key name' },
      { args: ['create', '--name=-leading-dash'], says: 'invalid key name "-leading-dash"' },
      { args: ['create', '--name', 'ok', '--bogus'], says: "'--bogus'" },
      { args: ['list', 'extra'], says: 'list takes no arguments' },
      { args: ['revoke'], says: 'revoke needs exactly one NAME' },
      { args: ['revoke', 'a/b'], says: 'invalid key name "a/b"' },
      {
        args: ['create', '--name', 'ok', '--rate-per-minute', 'fast'],
        says: '--rate-per-minute expects a whole number from 0',
      },
      { args: ['create', '--name', 'ok', '--burst', '0'], says: '--burst expects a whole number from 1' },
      { args: ['list', '--burst', '5'], says: '--rate-per-minute and --burst go with create only' },
    ];

    const runs = await Promise.all(cases.map((c) => runKeys(c.args, env)));

    for (const [i, run] of runs.entries()) {
      const label = JSON.stringify(cases[i]!.args);
      expect({ code: run.code, stdout: run.stdout }, label).toEqual({ code: 2, stdout: '' });
      expect(run.stderr, label).toContain(cases[i]!.says);
      expect(run.stderr, label).toContain('usage: npm run keys -- create --name NAME');
      expect(run.stderr, label).not.toMatch(STACK_FRAME);
    }
    expect(existsSync(env.PGLITE_DIR)).toBe(false);
  });

  it('--help prints the usage on stdout and exits 0', async () => {
    const run = await runKeys(['--help'], { PGLITE_DIR: join(dir, 'never-opened') });

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('usage: npm run keys -- create --name NAME');
  });
});

describe('create with a rate limit of its own', () => {
  let dir: string | undefined;

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('stores --rate-per-minute and --burst with the key, where the verifier finds them', {
    timeout: 90_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-keys-limits-'));
    const pgliteDir = join(dir, 'pglite');

    const run = await runKeys(['create', '--name', 'limited', '--rate-per-minute', '60', '--burst', '5'], {
      PGLITE_DIR: pgliteDir,
    });

    expect(run.code).toBe(0);
    const store = await openPglite(pgliteDir);
    try {
      expect(await createKeyVerifier(store, []).verify(run.stdout.trim())).toMatchObject({
        name: 'limited',
        ratePerMinute: 60,
        burst: 5,
      });
    } finally {
      await store.close();
    }
  });
});

for (const target of TARGETS) {
  describe.skipIf(!target.available)(target.name, () => {
    let subject: Awaited<ReturnType<Target['setUp']>>;
    let key = '';
    const runs: Run[] = [];
    const keys = async (...args: string[]): Promise<Run> => {
      const run = await runKeys(args, subject.env);
      runs.push(run);
      return run;
    };

    beforeAll(async () => {
      subject = await target.setUp();
    });

    afterAll(async () => {
      await subject?.tearDown();
    });

    // The first run on a fresh embedded folder initialises the database, which takes a while.
    it('create prints the new key alone on stdout and says on stderr that it will not be shown again', {
      timeout: 90_000,
    }, async () => {
      const run = await keys('create', '--name', 'alice');

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^mk_\S+\n$/);
      key = run.stdout.trim();
      expect(key).toMatch(KEY_SHAPE);
      expect(run.stderr).toContain('will not be shown again');
      expect(run.stderr).not.toContain(key);
    });

    it('the created key is accepted', async () => {
      expect(await subject.accepts(key)).toBe(true);
    });

    it('list shows the name with its creation time and no revocation, never the key or its digest', async () => {
      const run = await keys('list');

      expect(run.code).toBe(0);
      const [header, ...rows] = run.stdout.trimEnd().split('\n');
      expect(header!.split(/\s+/)).toEqual(['NAME', 'CREATED', 'REVOKED', 'RATE/MIN', 'BURST']);
      expect(rows.map((r) => r.split(/\s+/))).toEqual([
        ['alice', expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/), '-', 'default', 'default'],
      ]);
      expect(`${run.stdout}${run.stderr}`).not.toContain(key);
      for (const digest of [hashApiKey(key).toString('hex'), hashApiKey(key).toString('base64')]) {
        expect(`${run.stdout}${run.stderr}`).not.toContain(digest);
      }
    });

    it('a second key with a name already taken is refused with exit 1 and nothing on stdout', async () => {
      const run = await keys('create', '--name', 'alice');

      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe('a key named alice already exists');
    });

    it('revoke makes the key fail, within KEY_CACHE_MS on a running server', async () => {
      expect(await subject.accepts(key)).toBe(true);

      const run = await keys('revoke', 'alice');
      const revokedAt = Date.now();

      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: '' });
      while ((await subject.accepts(key)) && Date.now() - revokedAt < KEY_CACHE_MS + 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await subject.accepts(key)).toBe(false);
    });

    it('list then shows when the key was revoked', async () => {
      const run = await keys('list');

      expect(run.stdout).toMatch(/^alice\s+\S+Z\s+\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\s+default\s+default$/m);
    });

    it('revoking an unknown name, or a revoked key again, exits 1 and says no active key has that name', async () => {
      for (const name of ['nobody', 'alice']) {
        const run = await keys('revoke', name);

        expect(run).toMatchObject({ code: 1, stdout: '' });
        expect(run.stderr.trim()).toBe(`no active key named ${name}: nothing revoked`);
      }
    });

    it(
      'creating a key under the name of a revoked key is refused, saying the ' + 'name stays taken by the revoked key',
      async () => {
        const run = await keys('create', '--name', 'alice');

        expect(run).toMatchObject({ code: 1, stdout: '' });
        expect(run.stderr.trim()).toMatch(
          /^the name alice belongs to a key revoked at \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z \(a revoked key keeps its name\); choose another name$/,
        );
      },
    );

    it('no output or log line ever held the key except the stdout of create, and no run printed a stack', () => {
      expect(runs.length).toBeGreaterThanOrEqual(6);
      const [create, ...rest] = runs;
      expect(create!.stderr).not.toContain(key);
      for (const run of rest) expect(`${run.stdout}${run.stderr}`).not.toContain(key);
      for (const run of runs) expect(run.stderr).not.toMatch(STACK_FRAME);
      expect(subject.logText()).not.toContain(key);
    });
  });
}

// Private

/** Runs the CLI as `node --import tsx src/commands/keys.ts ARGS`, with `env` over a store-neutral environment. */
function runKeys(args: string[], env: Record<string, string>): Promise<Run> {
  const { DATABASE_URL: _url, PGLITE_DIR: _dir, API_KEYS: _keys, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/commands/keys.ts', ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ args, code, stdout, stderr }));
  });
}
