import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { lookUpAnswer } from '../src/cache/answer-keeper.js';
import { createResponseCache, type CachedAnswer } from '../src/cache/response-cache.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import type { Store } from '../src/db/store.js';
import { generateApiKey, hashApiKey } from '../src/auth/api-keys.js';
import { importFile } from '../src/import/import-files.js';
import { npm } from './support/processes.js';
import { heard, startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The response cache: a repeated request is answered without a statement, in the same
 * bytes; a write (in this process or another) makes the next answer the new data; as_of
 * and options are kept apart; every hit still costs its rate-limit units; memory stays bounded.
 */

const PATH = '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-06-01&end_date=2026-06-30';
const QUERY =
  '{ metric(name: token_price_usd, projects: [ethereum], from: "2026-06-01", ' +
  'to: "2026-06-30") { series { slug points { date value } } } }';

/** Counts statements that read the point table. */
function pointReads() {
  let reads = 0;
  const counts = (text: string) => {
    if (/\bfrom point\b|point_history/.test(text)) reads += 1;
  };
  return {
    get reads() {
      return reads;
    },
    reset: () => (reads = 0),
    wrap: (store: Store): Store => ({
      ...store,
      query: (text, params, signal) => (counts(text), store.query(text, params, signal)),
      queryRaw: (text, params, signal) => (counts(text), store.queryRaw(text, params, signal)),
      streamRaw: (text, params, batch, signal) => (counts(text), store.streamRaw(text, params, batch, signal)),
      listen: (channel, onMessage, onState) => store.listen(channel, onMessage, onState),
      transaction: (work) => store.transaction(work),
      copyCsv: (table, columns, csv) => store.copyCsv(table, columns, csv),
      exec: (script) => store.exec(script),
      close: () => store.close(),
    }),
  };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`the response cache on ${kind.name}`, { timeout: 60_000 }, () => {
    const probe = pointReads();
    let service: TestService;
    let dir: string;

    beforeAll(async () => {
      service = await startTestService(kind, {}, { wrapStore: probe.wrap });
      dir = await mkdtemp(join(tmpdir(), 'metrics-cache-'));
    });
    afterAll(async () => {
      await service?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });
    beforeEach(() => probe.reset());

    const importRows = async (rows: string) => {
      const file = join(dir, `rows-${Date.now()}.csv`);
      await writeFile(file, `metric,project,date,value\n${rows}\n`);
      await heard(service, () => importFile(service.running.services.store, CATALOG, file));
    };

    it('answers a repeated REST request from memory, in the same bytes and validators', async () => {
      const first = await service.get(PATH);
      const body = await first.text();
      expect(probe.reads).toBeGreaterThan(0);
      probe.reset();
      const again = await service.get(PATH);
      expect(await again.text()).toBe(body);
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(again.headers.get('last-modified')).toBe(first.headers.get('last-modified'));
      expect(again.headers.get('content-type')).toBe('application/json');
      const notModified = await service.get(PATH, { headers: { 'if-none-match': first.headers.get('etag')! } });
      expect(notModified.status).toBe(304);
      expect(probe.reads).toBe(0);
      // Other options, or another instant, are other answers.
      const asOf = await service.get(`${PATH}&as_of=2000-01-01`);
      expect(await asOf.json()).toEqual({ ethereum: [], solana: [] });
      expect(probe.reads).toBe(1);
    });

    it('answers a repeated GraphQL query from memory', async () => {
      const first = await (await service.graphql(QUERY)).text();
      expect(probe.reads).toBeGreaterThan(0);
      probe.reset();
      const res = await service.graphql(QUERY);
      expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
      expect(await res.text()).toBe(first);
      expect(probe.reads).toBe(0);
    });

    it(
      'answers every method but GET, POST and HEAD with 405 METHOD_NOT_ALLOWED, ' +
        'also with the body of a kept answer',
      async () => {
        const body = JSON.stringify({ query: QUERY });
        const headers = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };
        for (let round = 0; round < 2; round += 1) {
          expect((await service.get('/graphql', { method: 'POST', headers, body })).status).toBe(200);
          for (const method of ['DELETE', 'PATCH', 'PROPFIND']) {
            const res = await service.get('/graphql', { method, headers, body });
            const answer = JSON.parse(await res.text()) as {
              data?: unknown;
              errors: { extensions: { code: string } }[];
            };
            expect(res.status, method).toBe(405);
            expect(res.headers.get('allow'), method).toBe('GET, POST');
            expect(answer.data, method).toBeUndefined();
            expect(
              answer.errors.map((e) => e.extensions.code),
              method,
            ).toEqual(['METHOD_NOT_ALLOWED']);
          }
        }
      },
    );

    it("never answers a URL ending in /health (Yoga's health check) with a kept answer", async () => {
      const init = {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY }),
      };
      expect((await service.get('/graphql', init)).status).toBe(200);
      expect((await service.get('/graphql', init)).status).toBe(200);
      expect(await (await service.get('/graphql?next=/health', init)).text()).not.toContain('ethereum');
    });

    it(
      "answers a large GraphQL query (written in parts) whole, as REST's points, " +
        'and again from memory in the same bytes',
      async () => {
        const issuers = CATALOG.byName.get('etf-aum-change-pct')!.projects;
        const query =
          '{ metric(name: etf_aum_change_pct, from: "2026-01-01", to: "2026-06-30") ' +
          '{ series { slug points { date value } } } }';
        const first = await service.graphql(query);
        const bytes = Buffer.from(await first.arrayBuffer());
        expect(bytes.length).toBeGreaterThan(64 * 1024);
        expect(first.headers.get('content-length')).toBe(String(bytes.length));
        const series = (
          JSON.parse(bytes.toString('utf8')) as { data: { metric: { series: { slug: string; points: unknown[] }[] } } }
        ).data.metric.series;
        expect(series.map((s) => s.slug)).toEqual(issuers);
        const rest = (await (
          await service.get('/v1/metrics/etf-aum-change-pct?start_date=2026-01-01&end_date=2026-06-30')
        ).json()) as Record<string, { date: string; value: number }[]>;
        for (const { slug, points } of series)
          expect(points).toEqual(rest[slug]!.map(({ date, value }) => ({ date, value })));
        probe.reset();
        const again = await service.graphql(query);
        expect(again.headers.get('content-length')).toBe(String(bytes.length));
        expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
        expect(probe.reads).toBe(0);
      },
    );

    it('serves the new data right after a write is announced, on both APIs, as_of still the past', async () => {
      const before = (await (await service.get(PATH)).json()) as Record<string, { date: string; value: number }[]>;
      await service.graphql(QUERY);
      const instant = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      await importRows('token-price-usd,ethereum,2026-06-15,4242.5');
      probe.reset();
      const after = (await (await service.get(PATH)).json()) as typeof before;
      expect(after.ethereum!.find((p) => p.date === '2026-06-15')!.value).toBe(4242.5);
      expect(after.solana).toEqual(before.solana);
      const graphql = (await (await service.graphql(QUERY)).json()) as {
        data: { metric: { series: { points: { date: string; value: number }[] }[] } };
      };
      expect(graphql.data.metric.series[0]!.points.find((p) => p.date === '2026-06-15')!.value).toBe(4242.5);
      expect(probe.reads).toBe(2);
      const past = (await (await service.get(`${PATH}&as_of=${instant}`)).json()) as typeof before;
      expect(past).toEqual(before);
    });

    if (kind.name === 'postgres')
      it('serves the new data after an import in another process', async () => {
        await service.get(PATH);
        const file = join(dir, 'other-process.csv');
        await writeFile(file, 'metric,project,date,value\ntoken-price-usd,solana,2026-06-16,77.25\n');
        await heard(service, async () => {
          const run = await npm('import', [file], { DATABASE_URL: service.databaseUrl!, LOG_LEVEL: 'warn' });
          expect(run.code, run.stderr).toBe(0);
        });
        const after = (await (await service.get(PATH)).json()) as Record<string, { date: string; value: number }[]>;
        expect(after.solana!.find((p) => p.date === '2026-06-16')!.value).toBe(77.25);
      });

    it('charges every hit its units: a small bucket runs out on cached answers too', async () => {
      const key = generateApiKey();
      await insertApiKey(service.running.services.store, 'cache-limited', hashApiKey(key), {
        ratePerMinute: 1,
        burst: 3,
      });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await service.get(PATH, { key })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    });
  });
}

describe('the response cache bound', () => {
  it('keeps its entries within RESPONSE_CACHE_MB, and keeps nothing with 0', async () => {
    const service = await startTestService(STORE_KINDS[0]!, { RESPONSE_CACHE_MB: '0.05' });
    const off = await startTestService(STORE_KINDS[0]!, { RESPONSE_CACHE_MB: '0' });
    try {
      // About 1.3 KB each, so a hundred of them overflow 52 KB.
      for (const metric of CATALOG.metrics) {
        for (const slug of metric.projects.slice(0, 6)) {
          const path = `/v1/metrics/${metric.name}?project=${slug}&start_date=2026-06-01`;
          expect((await service.get(path)).status).toBe(200);
          await off.get(path);
        }
      }
      const stats = service.running.services.responseCache.stats;
      expect(stats.maxBytes).toBe(Math.floor(0.05 * 2 ** 20));
      expect(stats.entries).toBeGreaterThan(10);
      expect(stats.bytes).toBeLessThanOrEqual(stats.maxBytes);
      expect(stats.misses).toBeGreaterThan(stats.entries); // some were pushed out
      expect(off.running.services.responseCache.stats.entries).toBe(0);
    } finally {
      await Promise.all([service.stop(), off.stop()]);
    }
    // two seeded embedded services and 288 requests: over 30 s beside the rest of the suite
  }, 90_000);

  /**
   * A service with a 1 MB cache, which keeps no entry over 64 KB (a sixteenth), and the body
   * sizes of every answer offered to it: a half-year of every issuer's points is 500-560 KB.
   */
  const withSmallCache = async () => {
    const service = await startTestService(STORE_KINDS[0]!, { RESPONSE_CACHE_MB: '1' });
    const cache = service.running.services.responseCache;
    const offered: number[] = [];
    const set = cache.set.bind(cache);
    cache.set = (key, answer, ticket) => (offered.push(answer.body.length), set(key, answer, ticket));
    return { service, cache, offered };
  };

  it('joins no copy of a whole REST answer for the cache when it is too large to keep', async () => {
    // One answer under 30,000 points: written whole, not streamed.
    const { service, cache, offered } = await withSmallCache();
    try {
      const large = await service.get('/v1/metrics/etf-aum-change-pct?start_date=2026-01-01&end_date=2026-06-30');
      expect((await large.arrayBuffer()).byteLength).toBeGreaterThan(64 * 1024);
      const small = await service.get('/v1/metrics/price?project=ethereum&start_date=2026-06-01&end_date=2026-06-30');
      const smallBytes = (await small.arrayBuffer()).byteLength;
      expect({ offered, entries: cache.stats.entries }).toEqual({ offered: [smallBytes], entries: 1 });
    } finally {
      await service.stop();
    }
  });

  it('joins no copy of a large GraphQL answer for the cache when it is too large to keep', async () => {
    const { service, cache, offered } = await withSmallCache();
    try {
      const res = await service.graphql(
        '{ metric(name: etf_aum_change_pct, from: "2026-01-01", to: "2026-06-30") ' +
          '{ series { slug points { date value } } } }',
      );
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBeGreaterThan(64 * 1024);
      expect(res.headers.get('content-length')).toBe(String(bytes.length));
      expect({ offered, entries: cache.stats.entries }).toEqual({ offered: [], entries: 0 });
    } finally {
      await service.stop();
    }
  });
});

describe('the answer keeper', () => {
  const answer = (cost: number): CachedAnswer => ({ body: Buffer.from('{}'), contentType: 'application/json', cost });
  const meter = () => {
    const charges: number[] = [];
    return { charges, charge: async (cost: number) => void charges.push(cost) };
  };

  it('keeps no answer read before a write was announced, and keeps one read after it', async () => {
    const cache = createResponseCache(2 ** 20);
    cache.invalidate(true);
    const early = await lookUpAnswer(cache, 'k', meter());
    cache.invalidate(true); // a write announced while the early read ran
    const late = await lookUpAnswer(cache, 'k', meter());
    early.keep(answer(0));
    expect(cache.get('k')).toBeUndefined();
    late.keep(answer(0));
    expect(cache.get('k')).toBeDefined();
  });

  it('charges a kept answer its cost, and answers afresh when the key cannot pay', async () => {
    const cache = createResponseCache(2 ** 20);
    cache.invalidate(true);
    (await lookUpAnswer(cache, 'k', meter())).keep(answer(4));
    const paying = meter();
    expect((await lookUpAnswer(cache, 'k', paying)).kept?.cost).toBe(4);
    expect(paying.charges).toEqual([4]);
    const broke = {
      charge: async () => {
        throw new ApiError('rate-limited', 'no');
      },
    };
    expect((await lookUpAnswer(cache, 'k', broke)).kept).toBeUndefined();
    expect((await lookUpAnswer(cache, undefined, paying)).keeps(1)).toBe(false);
  });
});
