import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import type { CommandOutput } from '../src/commands/command.js';
import { syncCommand, type SyncArgs } from '../src/commands/sync.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import type { Store } from '../src/db/store.js';
import { npm } from './support/processes.js';
import { projectId } from './support/project-id.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

/**
 * Mirroring: a second real instance (the mirror, empty) syncs from a seeded one (the
 * upstream) over HTTP, and then answers every REST request with the same bytes. Through a
 * stub in front of the upstream: 429 and 500 are retried, a bad value writes nothing of
 * its series.
 */

interface Captured {
  output: CommandOutput;
  out: string[];
  err: string[];
}

function capture(): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (t) => out.push(t), err: (t) => err.push(t), progress: () => {} } };
}

async function sync(store: Store, args: Partial<SyncArgs> & { from: string }): Promise<Captured & { code: number }> {
  const captured = capture();
  const code = await syncCommand.run(
    { store, catalog: CATALOG, config: loadConfig({}), output: captured.output, signal: new AbortController().signal },
    { key: TEST_KEY, overlapDays: 7, ...args },
  );
  return { ...captured, code };
}

/** Every metric's whole REST answer, for all its projects. */
async function everyAnswer(service: TestService): Promise<Map<string, string>> {
  const answers = new Map<string, string>();
  for (const metric of CATALOG.metrics) {
    const res = await service.get(`/v1/metrics/${metric.name}?project=${metric.projects.join(',')}`);
    expect(res.status).toBe(200);
    answers.set(metric.name, await res.text());
  }
  return answers;
}

/** A front for the upstream that misbehaves once per rule, then passes requests through. */
async function startStub(
  upstream: string,
  rules: { path: RegExp; status?: number; rewrite?: (body: string) => string }[],
): Promise<{ url: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const used = new Set<number>();
  const server = createServer(async (req, res) => {
    hits.push(req.url!);
    const rule = rules.findIndex((r, i) => r.path.test(req.url!) && (r.status === undefined || !used.has(i)));
    if (rule >= 0 && rules[rule]!.status !== undefined) {
      used.add(rule);
      const status = rules[rule]!.status!;
      res.writeHead(
        status,
        status === 429
          ? { 'retry-after': '1', 'content-type': 'application/problem+json' }
          : { 'content-type': 'text/plain' },
      );
      res.end(status === 429 ? '{"detail":"slow down"}' : 'upstream broke');
      return;
    }
    const answer = await fetch(`${upstream}${req.url}`, {
      headers: { 'x-api-key': String(req.headers['x-api-key'] ?? '') },
    });
    let body = await answer.text();
    if (rule >= 0) body = rules[rule]!.rewrite!(body);
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, hits, server };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`sync on ${kind.name}`, { timeout: 180_000 }, () => {
    let upstream: TestService;
    let mirrorStore: StoreUnderTest;
    let mirror: TestService;

    beforeAll(async () => {
      upstream = await startTestService(kind);
      mirrorStore = await kind.open();
      await migrate(mirrorStore.store);
    });
    afterAll(async () => {
      await upstream?.stop();
      if (mirror !== undefined) await mirror.stop();
      else await mirrorStore?.dispose();
    });

    it("mirrors every series through 429 and 500 answers, then answers with the upstream's bytes", async () => {
      const stub = await startStub(upstream.url, [
        { path: /^\/v1\/metrics\/token-price-usd\?/, status: 429 },
        { path: /^\/v1\/metrics\/staking-apy\?/, status: 500 },
      ]);
      try {
        const run = await sync(mirrorStore.store, { from: stub.url });
        expect(run.err.join('')).toContain('upstream busy (429, Retry-After 1 s); retrying in 1.0 s');
        expect(run.err.join('')).toContain('upstream busy (500); retrying in 0.5 s');
        expect(run.code, run.err.join('')).toBe(0);
        const series = CATALOG.metrics.reduce((n, m) => n + m.projects.length, 0);
        expect(run.out.join('')).toMatch(
          new RegExp(
            `^synced ${series} of ${series} series from ${stub.url} in [\\d.]+ s: ` +
              `\\d+ points checked \\(\\d+/s\\), \\d+ written \\(\\d+ added, 0 revised, ` +
              `0 removed\\) in ${series} series, 2 retries\\n$`,
          ),
        );
      } finally {
        stub.server.close();
      }
      mirror = await startTestService(kind, {}, { store: mirrorStore });
      const [theirs, ours] = [await everyAnswer(upstream), await everyAnswer(mirror)];
      for (const metric of CATALOG.metrics) expect(ours.get(metric.name), metric.name).toBe(theirs.get(metric.name));
    });

    it('writes nothing on a second run, then only what changed upstream, removals included', async () => {
      const again = await sync(mirrorStore.store, { from: upstream.url });
      expect(again.code).toBe(0);
      expect(again.out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
      // Upstream revises a recent day and removes another; the mirror follows within the overlap.
      const res = await upstream.get('/v1/metrics/staking-apy?project=aptos&start_date=2026-06-25&end_date=2026-06-30');
      const days = ((await res.json()) as { aptos: { date: string; value: number }[] }).aptos;
      const store = upstream.running.services.store;
      const aptos = await projectId(store, 'staking-apy', 'aptos');
      await store.query('update point set value = 1.2345678901234567891 where project_id = $1 and day = $2', [
        aptos,
        days.at(-1)!.date,
      ]);
      await store.query('delete from point where project_id = $1 and day = $2', [aptos, days.at(-2)!.date]);
      const third = await sync(mirrorStore.store, { from: upstream.url, metrics: ['staking-apy'] });
      expect(third.out.join('')).toMatch(/, 2 written \(0 added, 1 revised, 1 removed\) in 1 series\n$/);
      const path = '/v1/metrics/staking-apy?project=aptos&start_date=2026-06-01';
      const mirrored = await (await mirror.get(path)).text();
      expect(mirrored).toBe(await (await upstream.get(path)).text());
      expect(mirrored).toContain('"value":1.2345678901234567891}'); // exact, past a double's digits
    });

    it('syncs nothing and fails when --metric or --project names what the upstream does not have', async () => {
      const count = async () =>
        (await mirrorStore.store.query<{ n: string }>('select count(*)::text as n from point'))[0]!.n;
      const before = await count();
      const run = await sync(mirrorStore.store, {
        from: upstream.url,
        metrics: ['token-price-usd', 'token-prices-usd'],
        projects: ['ethereum', 'etherium'],
        since: '2020-01-01',
      });
      expect(run.code).toBe(1);
      expect(run.err.join('')).toBe(
        'upstream has no metric token-prices-usd\n' +
          'upstream has no project etherium in token-price-usd, token-prices-usd\n' +
          `nothing synced: check --metric and --project against ${upstream.url}/v1/metrics\n`,
      );
      expect(run.out).toEqual([]);
      expect(await count()).toBe(before);
    });

    it('removes the last days of a series when the upstream removed them', async () => {
      const store = upstream.running.services.store;
      const cardano = await projectId(store, 'staking-apy', 'cardano');
      const [{ last }] = (await store.query<{ last: string }>(
        'select max(day)::text as last from point where project_id = $1',
        [cardano],
      )) as [{ last: string }];
      await store.query(`delete from point where project_id = $1 and day > $2::date - 3`, [cardano, last]);
      const run = await sync(mirrorStore.store, { from: upstream.url, metrics: ['staking-apy'] });
      expect(run.code).toBe(0);
      expect(run.out.join('')).toMatch(/, 3 written \(0 added, 0 revised, 3 removed\) in 1 series\n$/);
      const path = '/v1/metrics/staking-apy?project=cardano&start_date=2026-06-01';
      expect(await (await mirror.get(path)).text()).toBe(await (await upstream.get(path)).text());
      const again = await sync(mirrorStore.store, { from: upstream.url, metrics: ['staking-apy'] });
      expect(again.out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
    });

    it('removes in one run the last days the upstream removed, however many more than the overlap', async () => {
      const store = upstream.running.services.store;
      const idIn = (db: Store) => projectId(db, 'staking-apy', 'solana');
      const days = async (db: Store) =>
        await db.query<{ day: string; value: string }>(
          'select day::text, value::text from point where project_id = $1 order by day',
          [await idIn(db)],
        );
      const syncSolana = () =>
        sync(mirrorStore.store, { from: upstream.url, metrics: ['staking-apy'], projects: ['solana'] });
      expect((await syncSolana()).code).toBe(0);
      expect(await days(mirrorStore.store)).toEqual(await days(store));
      await store.query(
        `delete from point where project_id = $1 and day > (select max(day) from point where project_id = $1) - 20`,
        [await idIn(store)],
      );
      const run = await syncSolana();
      expect(run.code).toBe(0);
      expect(run.out.join('')).toMatch(/, 20 written \(0 added, 0 revised, 20 removed\) in 1 series\n$/);
      expect(await days(mirrorStore.store)).toEqual(await days(store));
      expect((await syncSolana()).out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
      // A series the upstream emptied is emptied here in one run too.
      await store.query('delete from point where project_id = $1', [await idIn(store)]);
      expect((await syncSolana()).code).toBe(0);
      expect(await days(mirrorStore.store)).toEqual([]);
      expect((await syncSolana()).out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
    });

    it(
      'copies days the upstream has before the first day stored here: history ' +
        'it back-filled, or a series begun here',
      async () => {
        const store = upstream.running.services.store;
        const idIn = (db: Store) => projectId(db, 'staking-apy', 'near');
        const days = async (db: Store) =>
          await db.query<{ day: string; value: string }>(
            'select day::text, value::text from point where project_id = $1 order by day',
            [await idIn(db)],
          );
        const syncNear = () =>
          sync(mirrorStore.store, { from: upstream.url, metrics: ['staking-apy'], projects: ['near'] });
        expect((await syncNear()).code).toBe(0);
        await store.query(
          `insert into point (project_id, day, value) values ($1, '2019-03-01', 4.5), ($1, '2019-03-02', 4.75)`,
          [await idIn(store)],
        );
        const run = await syncNear();
        expect(run.code).toBe(0);
        expect(run.out.join('')).toMatch(/, 2 written \(2 added, 0 revised, 0 removed\) in 1 series\n$/);
        expect(await days(mirrorStore.store)).toEqual(await days(store));
        expect((await syncNear()).out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
      },
    );

    it(
      'copies revisions and removals upstream of days older than the overlap ' +
        "through the upstream's changes feed, from the second run on",
      async () => {
        const store = upstream.running.services.store;
        const scope = { from: upstream.url, metrics: ['token-price-usd', 'etf-num-products'] };
        const idOf = (metric: string, slug: string) => projectId(store, metric, slug);
        const first = await sync(mirrorStore.store, scope);
        expect(first.code).toBe(0);
        expect(first.err.join('')).toContain(
          'changes feed: position kept; from the next run on, every revision upstream is copied, however old the day\n',
        );

        // Two months before the last day: far outside the 7 days each series is fetched again.
        const ethereum = await idOf('token-price-usd', 'ethereum');
        const blackrock = await idOf('etf-num-products', 'blackrock');
        await store.query(
          `update point set value = 4321.123456789012345678 where project_id = $1 and day = '2026-05-01'`,
          [ethereum],
        );
        await store.query(`delete from point where project_id = $1 and day = '2026-05-02'`, [ethereum]);
        await store.query(`insert into point (project_id, day, value) values ($1, '2016-05-03', 17.5)`, [ethereum]);
        await store.query(
          `update point set extra = jsonb_set(coalesce(extra, '{}'), '{spot}', '99') ` +
            `where project_id = $1 and day = '2026-04-30'`,
          [blackrock],
        );

        const second = await sync(mirrorStore.store, scope);
        expect(second.code, second.err.join('')).toBe(0);
        expect(second.err.join('')).toContain('changes feed: 4 entries since the last run, 4 points written\n');
        expect(second.out.join('')).toMatch(/, 4 written \(1 added, 2 revised, 1 removed\) in 2 series\n$/);
        for (const path of [
          '/v1/metrics/token-price-usd?project=ethereum',
          '/v1/metrics/etf-num-products?project=blackrock',
        ]) {
          const mirrored = await (await mirror.get(path)).text();
          expect(mirrored, path).toBe(await (await upstream.get(path)).text());
        }
        expect(
          await (
            await mirror.get('/v1/metrics/token-price-usd?project=ethereum&start_date=2026-05-01&end_date=2026-05-02')
          ).text(),
        ).toBe('{"ethereum":[{"date":"2026-05-01","value":4321.123456789012345678}]}');
        expect(
          await (
            await mirror.get('/v1/metrics/etf-num-products?project=blackrock&start_date=2026-04-30&end_date=2026-04-30')
          ).text(),
        ).toContain('"spot": 99');

        const third = await sync(mirrorStore.store, scope);
        expect(third.err.join('')).toContain('changes feed: 0 entries since the last run, 0 points written\n');
        expect(third.out.join('')).toMatch(/, 0 written \(0 added, 0 revised, 0 removed\) in 0 series\n$/);
      },
    );

    it(
      'syncs by range alone from an upstream without a changes feed, and takes ' +
        "the feed's end again when the upstream refuses the position kept",
      async () => {
        const noFeed = await startStub(upstream.url, [{ path: /^\/v1\/changes\?/, status: 404 }]);
        try {
          const run = await sync(mirrorStore.store, { from: noFeed.url, metrics: ['price'] });
          expect(run.code, run.err.join('')).toBe(0);
          expect(run.err.join('')).toContain(
            `changes feed: not offered (${noFeed.url}/v1/changes answered 404: upstream ` +
              `broke); only each series' last days are compared, so older revisions upstream ` +
              `need --since\n`,
          );
          expect(run.out.join('')).toMatch(/^synced \d+ of \d+ series /);
        } finally {
          noFeed.server.close();
        }
        const scope = { from: upstream.url, metrics: ['price'], projects: ['solana'] };
        expect((await sync(mirrorStore.store, scope)).err.join('')).toContain('changes feed: position kept');
        const refusing = await startStub(upstream.url, [{ path: /^\/v1\/changes\?cursor=/, status: 400 }]);
        try {
          // The position is kept per upstream: the stub in front is another one, so give it the one kept for the
          // upstream.
          await mirrorStore.store.query(
            `update sync_cursor set upstream = $2 || ' metrics=price projects=solana' ` +
              `where upstream = $1 || ' metrics=price projects=solana'`,
            [upstream.url, refusing.url],
          );
          const run = await sync(mirrorStore.store, { ...scope, from: refusing.url });
          expect(run.code, run.err.join('')).toBe(0);
          expect(run.err.join('')).toContain(
            `changes feed: the position kept was refused (${refusing.url}/v1/changes ` +
              `answered 400: upstream broke); kept the feed's end again`,
          );
          const again = await sync(mirrorStore.store, { ...scope, from: refusing.url });
          expect(again.err.join('')).toContain('changes feed: 0 entries since the last run, 0 points written\n');
        } finally {
          refusing.server.close();
        }
      },
    );

    it('writes nothing of a series with a bad value, names it, and syncs the rest', async () => {
      const store = upstream.running.services.store;
      const ethereum = await projectId(store, 'transaction-fail-total', 'ethereum');
      await store.query(
        `insert into point (project_id, day, value) values ($1, '2026-07-01', 5), ($1, '2026-07-02', 6)`,
        [ethereum],
      );
      const stub = await startStub(upstream.url, [
        {
          path: /^\/v1\/metrics\/transaction-fail-total\?project=ethereum&/,
          rewrite: (body) => body.replace('"date":"2026-07-02","value":6', '"date":"2026-07-02","value":6.5'),
        },
      ]);
      try {
        const run = await sync(mirrorStore.store, { from: stub.url, metrics: ['transaction-fail-total'] });
        expect(run.code).toBe(1);
        expect(run.err.join('')).toContain(
          'transaction-fail-total/ethereum 2026-07-02: expected a whole number for ' +
            'the integer metric "transaction-fail-total", found "6.5"; nothing of this ' +
            'series was written',
        );
        expect(run.out.join('')).toMatch(/^synced \d+ of \d+ series .*, 1 refused\n$/);
      } finally {
        stub.server.close();
      }
      const path = '/v1/metrics/transaction-fail-total?project=ethereum&start_date=2026-06-30';
      expect(await (await mirror.get(path)).text()).toBe(
        '{"ethereum":[{"date":"2026-06-30","value":' +
          JSON.parse(await (await upstream.get(path)).text()).ethereum[0].value +
          '}]}',
      );
    });
  });
}

describe('npm run sync', { timeout: 120_000 }, () => {
  let upstream: TestService;
  let dir: string;
  beforeAll(async () => {
    upstream = await startTestService(STORE_KINDS[0]!);
    dir = await mkdtemp(join(tmpdir(), 'metrics-sync-'));
  });
  afterAll(async () => {
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses bad arguments before touching any store, and reports a wrong key as the upstream said it', async () => {
    const usage = await npm('sync', ['--from', 'ftp://x', '--overlap-days', 'many', '--since', '2026-13-01'], {
      PGLITE_DIR: join(dir, 'pglite'),
      UPSTREAM_API_KEY: '',
    });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--from: give the upstream service's URL");
    expect(usage.stderr).toContain("--key: give the upstream's API key");
    expect(usage.stderr).toContain('--since: expected a date YYYY-MM-DD, got "2026-13-01"');
    expect(usage.stderr).toContain('--overlap-days: expected a whole number');
    const wrongKey = await npm('sync', ['--from', upstream.url, '--key', 'nope'], { PGLITE_DIR: join(dir, 'pglite') });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/\/v1\/metrics answered 401: /);
  });

  it('mirrors into the embedded store from the command line, with the key from UPSTREAM_API_KEY', async () => {
    const run = await npm(
      'sync',
      ['--from', upstream.url, '--metric', 'token-price-usd', '--project', 'ethereum,solana'],
      { PGLITE_DIR: join(dir, 'pglite'), UPSTREAM_API_KEY: TEST_KEY },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^synced 2 of 2 series from http:\/\/127\.0\.0\.1:\d+ in [\d.]+ s: \d+ points checked/);
  });
});

describe('sync from an upstream that does not follow the contract', { timeout: 60_000 }, () => {
  let store: StoreUnderTest;
  let server: Server;
  let url: string;
  /** What the stand-in upstream answers to GET /v1/metrics next. */
  let answer: { status: number; type: string; body: string };

  beforeAll(async () => {
    store = await STORE_KINDS[0]!.open();
    await migrate(store.store);
    server = createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server?.close();
    await store?.dispose();
  });

  it.each([
    [
      'text that is not JSON',
      'hello not json',
      /\/v1\/metrics did not answer JSON \(it began "hello not json"\); is it the \/v1 API of a metrics service\?/,
    ],
    ['JSON that is not a catalog', '{}', /\/v1\/metrics is not a \/v1 catalog \(metrics: .+\); is it the \/v1 API/],
    [
      'a catalog whose metrics are not a list',
      '{"metrics":"x"}',
      /\/v1\/metrics is not a \/v1 catalog \(metrics: .+\)/,
    ],
    [
      'a catalog with a bad date',
      '{"metrics":[{"name":"price","projects":[{"slug":"ethereum","firstDate":"2026-13-01","lastDate":null}]}]}',
      /is not a \/v1 catalog \(metrics\.0\.projects\.0\.firstDate: /,
    ],
    ['a catalog listing no metric', '{"metrics":[]}', /\/v1\/metrics lists no metric; is it the \/v1 API/],
  ])('fails with exit 1 and says what is wrong when the catalog is %s', async (_what, body, expected) => {
    answer = { status: 200, type: 'application/json', body };
    const run = await sync(store.store, { from: url });
    expect(run.code).toBe(1);
    expect(run.err.join('')).toMatch(expected);
    expect(run.err.join('')).toContain(url);
    expect([...run.out, ...run.err].join('')).not.toMatch(/synced 0 of 0|is not iterable|Unexpected token/);
  });

  it('names the upstream and its message on one line when it answers an HTML error page', async () => {
    answer = {
      status: 404,
      type: 'text/html',
      body: '<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Not found</h1>\n  </body>\n</html>\n',
    };
    const run = await sync(store.store, { from: url });
    expect(run.code).toBe(1);
    expect(run.err.join('')).toContain(
      `${url}/v1/metrics answered 404: <!DOCTYPE html> <html> <body> <h1>Not found</h1> </body> </html>\n`,
    );
  });
});
