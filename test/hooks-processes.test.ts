import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/open-postgres.js';
import { commit, createHook } from './support/hook-writes.js';
import { startReceiver } from './support/hook-receiver.js';
import { until } from './support/poll.js';
import { npm, npmStart, type StartedServer } from './support/processes.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const KEY = 'process-key-0123456789abcdef';
const DAYS = ['2030-01-01', '2030-01-02', '2030-01-03', '2030-01-04', '2030-01-05'];

/** A receiver that holds the first request it gets (never answers it) and answers 200 to the rest. */
async function holdingReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let holding = true;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (holding)
        holding = false; // the first one: left hanging
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('a server killed mid-delivery, on the embedded store, with the hooks command', () => {
  let dir: string;
  let server: StartedServer | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-hooks-'));
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers the rest after a restart, each event in order, and the CLI manages the hook', async () => {
    const receiver = await holdingReceiver();
    const env = {
      PGLITE_DIR: join(dir, 'pglite'),
      DATABASE_URL: '',
      SEED_YEARS: '1',
      HOOKS_ALLOW_PRIVATE: 'on',
      HOOKS_RETRY_BASE_SECONDS: '0.05',
      API_KEYS: KEY,
      LOG_LEVEL: 'warn',
    };
    try {
      server = await npmStart(env, 120_000);
      // Commands beside the running server are handed to it.
      const key = await npm('keys', ['create', '--name', 'cli'], env);
      expect(key.code).toBe(0);
      const created = await npm(
        'hooks',
        ['create', '--key', 'cli', '--url', receiver.url, '--rule', 'landed'].concat([
          '--metric',
          'token-price-usd',
          '--project',
          'ethereum',
        ]),
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain('running hooks there');
      const hook = JSON.parse(created.stdout) as { id: string; secret: string };
      expect(hook.secret).toMatch(/^whsec_/);
      const files: string[] = [];
      for (const [i, day] of DAYS.entries()) {
        const file = join(dir, `day-${i}.csv`);
        await writeFile(file, `metric,project,date,value\ntoken-price-usd,ethereum,${day},${i + 1}\n`);
        files.push(file);
      }
      expect((await npm('import', files, env)).code).toBe(0);
      await until('the first delivery, held', () => receiver.received.length >= 1);
      await server.stop('SIGKILL');
      server = await npmStart(env, 120_000);
      const webhook = new Webhook(hook.secret);
      const events = () => {
        const seen = new Set<string>();
        return receiver.received.slice(1).flatMap((r) => {
          const id = String(r.headers['webhook-id']);
          if (seen.has(id)) return [];
          seen.add(id);
          return (webhook.verify(r.body, r.headers as Record<string, string>) as { events: { date: string }[] }).events;
        });
      };
      await until('every event after the restart', () => events().length === DAYS.length, { withinMs: 30_000 });
      expect(events().map((e) => e.date)).toEqual(DAYS);
      // The attempt cut off by the kill is made again, with the same webhook-id.
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);

      const deliveries = await until('the deliveries listed as delivered', async () => {
        const run = await npm('hooks', ['deliveries', hook.id], env);
        return run.stdout.split('\n').filter((l) => l.includes(' delivered ')).length === DAYS.length && run;
      });
      expect(deliveries.code).toBe(0);
      const listed = await npm('hooks', ['list'], env);
      expect(listed.stdout).toContain(hook.id);
      expect(listed.stdout).toContain('cli');
      expect(listed.stdout).not.toContain(hook.secret);
      const usage = await npm('hooks', ['create', '--key', 'cli', '--url', receiver.url, '--rule', 'sometimes'], env);
      expect(usage.code).toBe(2);
      expect((await npm('hooks', ['delete', hook.id], env)).code).toBe(0);
      expect((await npm('hooks', ['delete', hook.id], env)).code).toBe(1);
    } finally {
      await receiver.close();
    }
  }, 300_000);
});

describe.skipIf(!STORE_KINDS[1]!.available)('two instances on one PostgreSQL database', () => {
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    const env = { HOOKS_ALLOW_PRIVATE: 'on', HOOKS_RETRY_BASE_SECONDS: '0.05' };
    first = await startTestService(STORE_KINDS[1]!, env);
    const store = openPostgres({
      url: first.databaseUrl!,
      poolSize: 4,
      statementTimeoutSeconds: 5,
      connectTimeoutSeconds: 5,
    });
    second = await startTestService(STORE_KINDS[1]!, env, {
      store: { store, url: first.databaseUrl!, dispose: () => store.close() },
    });
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('deliver each event once', async () => {
    const receiver = await startReceiver();
    try {
      const hooks = [];
      for (const slug of ['ethereum', 'solana', 'arbitrum'])
        hooks.push(
          await createHook(first, {
            url: receiver.url,
            filter: { metrics: ['token-price-usd'], projects: [slug] },
            rules: [{ type: 'landed' }],
          }),
        );
      const days = Array.from({ length: 20 }, (_, i) => `2026-07-${String(i + 1).padStart(2, '0')}`);
      for (const [i, day] of days.entries()) {
        const writer = i % 2 === 0 ? first : second;
        await commit(writer, [
          ['token-price-usd', 'ethereum', day, i],
          ['token-price-usd', 'solana', day, i],
          ['token-price-usd', 'arbitrum', day, i],
        ]);
      }
      await until('every event', () => receiver.received.length >= 3 * days.length);
      // A little longer: a second copy of any would show now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(3 * days.length);
      // In order per hook, whichever instance sent each (20 deliveries: order by number, not by text).
      for (const hook of hooks) {
        const dates = receiver.received
          .filter((r) => JSON.parse(r.body).hook === hook.id)
          .map((r) => (JSON.parse(r.body) as { events: { date: string }[] }).events[0]!.date);
        expect(dates).toEqual(days);
      }
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
