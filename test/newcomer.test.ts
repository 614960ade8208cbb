import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npm, npmStart, type StartedServer } from './support/processes.js';

/**
 * What a new user does, as they do it: `npm start` on an empty folder, then the commands
 * of the README while the server runs, Ctrl-C, and a restart. Every command here is the
 * real npm script in a child process.
 */
describe('a newcomer on the embedded store', { timeout: 120_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  let server: StartedServer;
  let key: string;
  /** Days after the last seeded one, so nothing is stored on them but what the tests import. */
  let imported: string;
  let refused: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-newcomer-'));
    env = { PGLITE_DIR: join(dir, 'pglite'), LOG_LEVEL: 'info' };
    server = await npmStart(env);
    key = /Created API key "local" \(shown once, keep it\): (mk_[\w-]+)/.exec(server.stderr())?.[1] ?? '';
    const seeded = await lastDayOf(['transaction-fail-total', 'token-price-usd'], 'ethereum');
    [imported, refused] = [daysAfter(seeded, 1), daysAfter(seeded, 32)];
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
  const withKey = (k: string) => ({ headers: { 'x-api-key': k } });
  /** The last day stored for `slug` in any of `metrics`, read from the service itself. */
  const lastDayOf = async (metrics: string[], slug: string) => {
    const days: string[] = [];
    for (const metric of metrics) {
      const res = await get(`/v1/metrics/${metric}?project=${slug}`, withKey(key));
      expect(res.status).toBe(200);
      const points = ((await res.json()) as Record<string, { date: string }[]>)[slug]!;
      expect(points.length).toBeGreaterThan(0);
      days.push(points.at(-1)!.date);
    }
    return days.sort().at(-1)!;
  };

  it('starts on an empty folder, seeded, and prints a local key exactly once', async () => {
    expect(key).toMatch(/^mk_[\w-]{43}$/);
    expect(server.stderr().split(key)).toHaveLength(2);
    expect(server.stderr()).toContain(`  Explorer:  ${server.url}/explore   (charts; it asks for your key)`);
    expect(server.stderr()).toMatch(/seeded \d{6} sample points for 420 series/);
    const res = await get('/v1/metrics/token-price-usd?project=ethereum', withKey(key));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ethereum: { date: string; value: number }[] };
    expect(body.ethereum.length).toBeGreaterThan(1000);
  });

  it('serves the key in no answer to a request without it', async () => {
    const requests: [string, RequestInit][] = [
      ['/graphql', { headers: { accept: 'text/html' } }],
      [
        '/graphql',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ metrics { name } }"}' },
      ],
      ['/docs', {}],
      ['/healthz', {}],
      ['/readyz', {}],
      ['/v1/metrics', {}],
      ['/v1/openapi.json', {}],
      ['/', {}],
    ];
    for (const [path, init] of requests) {
      const text = await (await get(path, init)).text();
      expect(text, path).not.toContain(key);
      expect(text, path).not.toMatch(/mk_[\w-]{43}/);
    }
  });

  it('shows a welcome message whose example request returns data', async () => {
    const curl = /curl -H "x-api-key: \$KEY" "([^"]+)"/.exec(server.stderr())?.[1];
    expect(curl).toBeDefined();
    const body = (await (await fetch(curl!, withKey(key))).json()) as { ethereum: unknown[] };
    expect(body.ethereum).toHaveLength(30);
  });

  it('creates a key while the server runs: the server carries the command out and the key works at once', async () => {
    const run = await npm('keys', ['create', '--name', 'bob'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('running keys there');
    const bob = run.stdout.trim();
    expect(bob).toMatch(/^mk_[\w-]{43}$/);
    expect((await get('/v1/metrics/price?project=ethereum', withKey(bob))).status).toBe(200);
    expect(server.stdout()).not.toContain(bob);
  });

  it(
    'revokes a key while the server runs: the server carries the command out ' + 'and refuses the key at once',
    async () => {
      const run = await npm('keys', ['create', '--name', 'carol'], env);
      const carol = run.stdout.trim();
      // now in the server's key cache
      expect((await get('/v1/metrics/price?project=ethereum', withKey(carol))).status).toBe(200);

      const revoke = await npm('keys', ['revoke', 'carol'], env);
      expect(revoke.code).toBe(0);
      expect(revoke.stderr).toContain('Revoked key "carol"; the running server no longer accepts it.');
      const refused = await get('/v1/metrics/price?project=ethereum', withKey(carol));
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      expect(await refused.text()).not.toContain(carol);
    },
  );

  it('imports a file while the server runs and serves its rows at once', async () => {
    const file = join(dir, 'points.csv');
    const rows = [`transaction-fail-total,ethereum,${imported},42.0`, `token-price-usd,ethereum,${imported},1.50`];
    await writeFile(file, `metric,project,date,value\n${rows.join('\n')}\n`);
    const run = await npm('import', [file], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^imported 2 rows from .*points\.csv/);
    const res = await get(`/v1/metrics/transaction-fail-total?project=ethereum&start_date=${imported}`, withKey(key));
    expect(await res.text()).toBe(`{"ethereum":[{"date":"${imported}","value":42}]}`);
  });

  it('refuses a bad file with its line number and writes nothing of it', async () => {
    const file = join(dir, 'bad.csv');
    const rows = [`token-price-usd,ethereum,${refused},3`, `token-price-usd,nowhere,${daysAfter(refused, 1)},4`];
    await writeFile(file, `metric,project,date,value\n${rows.join('\n')}\n`);
    const run = await npm('import', [file], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('bad.csv:3: project "nowhere" is not allowed for metric "token-price-usd"');
    const res = await get(`/v1/metrics/token-price-usd?project=ethereum&start_date=${refused}`, withKey(key));
    expect(await res.text()).toBe('{"ethereum":[]}');
  });

  it('runs db:migrate and keys list through the server', async () => {
    const migrate = await npm('db:migrate', [], env);
    expect(migrate.code).toBe(0);
    expect(migrate.stderr).toContain('schema and catalog are up to date');
    const list = await npm('keys', ['list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^local\s/m);
    expect(list.stdout).toMatch(/^bob\s/m);
  });

  it('refuses a second server on the same folder at once, naming the one that holds it', async () => {
    const started = Date.now();
    await expect(npmStart(env, 20_000)).rejects.toThrow(
      /held by process \d+ \(npm start\); only one process may serve an embedded store/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops on Ctrl-C with its last log lines written, then restarts with the data and no new key', async () => {
    await server.stop('SIGINT');
    expect(
      server
        .logLines()
        .slice(-2)
        .map((l) => l.msg),
    ).toEqual(['shutting down', 'stopped']);

    const list = await npm('keys', ['list'], env);
    expect(list.code).toBe(0);
    expect(list.stderr).not.toContain('running keys there');

    server = await npmStart(env);
    expect(server.stderr()).not.toContain('Created API key');
    expect(server.stderr()).not.toContain('seeded');
    const res = await get(`/v1/metrics/transaction-fail-total?project=ethereum&start_date=${imported}`, withKey(key));
    expect(await res.text()).toBe(`{"ethereum":[{"date":"${imported}","value":42}]}`);
  });
});

describe('Ctrl-C during the first start', { timeout: 120_000 }, () => {
  it(
    'stops during seeding without announcing itself ready, shows the key it ' +
      'made, and the next start serves with it',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'metrics-ctrl-c-'));
      const env = { ...process.env, HOST: '127.0.0.1', PORT: '0', PGLITE_DIR: join(dir, 'pglite'), LOG_LEVEL: 'info' };
      try {
        const child = spawn('npm', ['start'], { cwd: process.cwd(), detached: true, env });
        let err = '';
        let out = '';
        child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
        const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
        await new Promise<void>((resolve, reject) => {
          child.stderr!.on('data', (b: Buffer) => {
            err += b.toString();
            if (err.includes('seeding sample data')) resolve();
          });
          void exited.then(() => reject(new Error(`npm start ended before seeding:\n${err}`)));
        });
        process.kill(-child.pid!, 'SIGINT');
        await exited;
        expect(err).not.toContain('Metrics service ready at');
        // Seeding is one statement, so it ends, and the key made after it is shown: it exists now.
        const key = /Created API key "local" \(shown once, keep it\): (mk_[\w-]+)/.exec(err)?.[1];
        expect(key).toMatch(/^mk_[\w-]{43}$/);
        const messages = out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => (JSON.parse(l) as { msg?: string }).msg);
        expect(messages).toContain('shutting down');
        expect(messages.at(-1)).toBe('stopped');
        expect(messages).not.toContain('ready');

        const again = await npmStart({ PGLITE_DIR: join(dir, 'pglite'), LOG_LEVEL: 'info' });
        try {
          expect(again.stderr()).not.toMatch(/mk_[\w-]{43}/);
          const res = await fetch(`${again.url}/v1/metrics/token-price-usd?project=ethereum`, {
            headers: { 'x-api-key': key! },
          });
          expect(res.status).toBe(200);
          expect(((await res.json()) as { ethereum: unknown[] }).ethereum.length).toBeGreaterThan(1000);
        } finally {
          await again.stop();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

// Private

/** The ISO date `n` days after `date`. */
function daysAfter(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}
