import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/open-postgres.js';
import type { Store } from '../src/db/store.js';
import { createUsageCounter, USAGE_DAYS, USAGE_HOURS } from '../src/limits/usage-counter.js';
import { until } from './support/poll.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

/** A year of four projects: four units (a unit per project-year). */
const FOUR_UNITS_PATH =
  '/v1/metrics/token-price-usd?project=arbitrum,ethereum,fogo,solana&start_date=2025-07-01&end_date=2026-06-30';

interface Period {
  units: number;
  requests: number;
}
interface UsageAnswer {
  rateLimit: { limit: number | null; remaining: number | null; resetSeconds: number | null };
  hours: (Period & { hour: string })[];
  days: (Period & { date: string })[];
}

/** A clock the test sets. */
function settableClock(start: string) {
  let now = Date.parse(start);
  return {
    clock: () => new Date(now),
    set: (iso: string) => {
      now = Date.parse(iso);
    },
  };
}

/** Waits until every request the service took is answered and counted (counting happens as a request closes). */
async function settled(service: TestService): Promise<void> {
  await until('requests closed', () => service.running.services.state.inFlight === 0, { everyMs: 2 });
}

async function usageOf(service: TestService): Promise<UsageAnswer> {
  await settled(service);
  const res = await service.get('/v1/usage');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return (await res.json()) as UsageAnswer;
}

const hourOf = (usage: UsageAnswer, hour: string) => usage.hours.find((h) => h.hour === hour);
const dayOf = (usage: UsageAnswer, date: string) => usage.days.find((d) => d.date === date);

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`usage per key on ${kind.name}`, { timeout: 120_000 }, () => {
    const time = settableClock('2026-06-20T08:10:00Z');
    let service: TestService;

    beforeAll(async () => {
      service = await startTestService(
        kind,
        { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '1000', RESPONSE_CACHE_MB: '0' },
        { clock: time.clock },
      );
    });
    afterAll(async () => {
      await service?.stop();
    });

    it('lists requests and units per UTC hour for 48 hours and per UTC day for 30 days, with the key’s bucket', async () => {
      // 2026-05-01: further back than 30 days when read; 2026-06-20: in the days, not the hours.
      time.set('2026-05-01T09:00:00Z');
      expect((await service.get(FOUR_UNITS_PATH)).status).toBe(200);
      time.set('2026-06-20T08:10:00Z');
      expect((await service.get(FOUR_UNITS_PATH)).status).toBe(200);
      time.set('2026-06-30T10:15:00Z');
      await service.get(FOUR_UNITS_PATH);
      await service.get(FOUR_UNITS_PATH);
      await service.get('/v1/metrics'); // one unit
      // Dry runs are charged nothing and not counted.
      expect((await service.get(`${FOUR_UNITS_PATH}&dry_run=true`)).status).toBe(200);
      time.set('2026-06-30T11:59:59Z');
      await service.get(FOUR_UNITS_PATH);
      time.set('2026-07-01T01:20:00Z');
      await service.get(FOUR_UNITS_PATH);
      // Refused after the key was accepted: the unit paid at the door.
      expect((await service.get('/v1/metrics/token-price-usd?start_date=nope')).status).toBe(400);
      time.set('2026-07-01T01:30:00Z');

      const usage = await usageOf(service);

      expect(usage.hours).toHaveLength(USAGE_HOURS);
      expect(usage.hours[0]!.hour).toBe('2026-06-29T02:00:00Z');
      expect(usage.hours.at(-1)!.hour).toBe('2026-07-01T01:00:00Z');
      expect(hourOf(usage, '2026-06-30T10:00:00Z')).toEqual({ hour: '2026-06-30T10:00:00Z', units: 9, requests: 3 });
      expect(hourOf(usage, '2026-06-30T11:00:00Z')).toEqual({ hour: '2026-06-30T11:00:00Z', units: 4, requests: 1 });
      expect(hourOf(usage, '2026-07-01T01:00:00Z')).toEqual({ hour: '2026-07-01T01:00:00Z', units: 5, requests: 2 });
      const others = usage.hours.filter((h) => !['10', '11'].includes(h.hour.slice(11, 13)) && h.units > 0);
      expect(others.map((h) => h.hour)).toEqual(['2026-07-01T01:00:00Z']);
      expect(usage.hours.reduce((n, h) => n + h.units, 0)).toBe(18);

      expect(usage.days).toHaveLength(USAGE_DAYS);
      expect(usage.days[0]!.date).toBe('2026-06-02');
      expect(usage.days.at(-1)).toEqual({ date: '2026-07-01', units: 5, requests: 2 });
      expect(dayOf(usage, '2026-06-30')).toEqual({ date: '2026-06-30', units: 13, requests: 4 });
      expect(dayOf(usage, '2026-06-20')).toEqual({ date: '2026-06-20', units: 4, requests: 1 });
      expect(usage.days.reduce((n, d) => n + d.requests, 0)).toBe(7);

      expect(usage.rateLimit).toMatchObject({ limit: 1000 });
      expect(usage.rateLimit.remaining).toBeGreaterThan(0);
    });

    it('answers GraphQL usage with the same figures, the REST usage request counted once it was answered', async () => {
      await settled(service);
      const res = await service.graphql(
        '{ usage { rateLimit { limit remaining } hours { hour units requests } days { date units requests } } }',
      );
      const body = (await res.json()) as { data: { usage: UsageAnswer } };
      const usage = body.data.usage;
      expect(usage.hours).toHaveLength(USAGE_HOURS);
      expect(usage.days).toHaveLength(USAGE_DAYS);
      expect(hourOf(usage, '2026-06-30T10:00:00Z')).toMatchObject({ units: 9, requests: 3 });
      // The GET /v1/usage of the test before: one more unit and request this hour.
      expect(hourOf(usage, '2026-07-01T01:00:00Z')).toMatchObject({ units: 6, requests: 3 });
      expect(dayOf(usage, '2026-07-01')).toMatchObject({ units: 6, requests: 3 });
      expect(usage.rateLimit.limit).toBe(1000);
    });

    it('refuses parameters on /v1/usage', async () => {
      const res = await service.get('/v1/usage?days=90');
      expect(res.status).toBe(400);
      expect(((await res.json()) as { errors: { param: string }[] }).errors[0]!.param).toBe('days');
    });

    it('writes what it counted when the service stops: nothing is lost', async () => {
      const opened: StoreUnderTest = await kind.open();
      const keep = { ...opened, dispose: async () => {} };
      // The service's store outlives it, so what shutdown wrote can be read afterwards.
      const stopping = await startTestService(
        kind,
        {},
        { store: keep, clock: () => new Date('2026-06-30T12:00:00Z'), wrapStore: unclosable },
      );
      try {
        for (let i = 0; i < 3; i++) expect((await stopping.get(FOUR_UNITS_PATH)).status).toBe(200);
        await settled(stopping);
        await stopping.running.close();
        const rows = await opened.store.query<{ units: number; requests: number }>(
          'select sum(units)::float8 as units, sum(requests)::float8 as requests from key_usage',
        );
        expect(rows).toEqual([{ units: 12, requests: 3 }]);
      } finally {
        await opened.dispose();
      }
    });
  });
}

const postgresKind = STORE_KINDS.find((k) => k.name === 'postgres')!;

describe.skipIf(!postgresKind.available)(
  'usage of two instances on one PostgreSQL database',
  { timeout: 120_000 },
  () => {
    const clock = () => new Date('2026-06-30T12:30:00Z');
    let first: TestService;
    let second: TestService;
    let secondStore: Store;

    beforeAll(async () => {
      first = await startTestService(postgresKind, { RESPONSE_CACHE_MB: '0' }, { clock });
      secondStore = openPostgres({
        url: first.databaseUrl!,
        poolSize: 2,
        statementTimeoutSeconds: 5,
        connectTimeoutSeconds: 5,
      });
      second = await startTestService(
        postgresKind,
        { RESPONSE_CACHE_MB: '0' },
        { store: { store: secondStore, dispose: async () => {} }, clock },
      );
    });
    afterAll(async () => {
      await second?.stop();
      await first?.stop();
    });

    it('adds up what each instance counted', async () => {
      await first.get(FOUR_UNITS_PATH);
      await first.get(FOUR_UNITS_PATH);
      await second.get(FOUR_UNITS_PATH);
      await second.get('/v1/metrics');
      await settled(second);
      await second.running.services.usage.flush();

      const fromFirst = await usageOf(first);
      expect(hourOf(fromFirst, '2026-06-30T12:00:00Z')).toMatchObject({ units: 13, requests: 4 });
      await settled(first);
      await first.running.services.usage.flush();
      const fromSecond = await usageOf(second);
      // The first instance's GET /v1/usage is counted as well now.
      expect(hourOf(fromSecond, '2026-06-30T12:00:00Z')).toMatchObject({ units: 14, requests: 5 });
      expect(dayOf(fromSecond, '2026-06-30')).toMatchObject({ units: 14, requests: 5 });
    });
  },
);

describe('the usage counter in memory', () => {
  it('holds at most twice its bound of sums while a write is under way, and says how many it did not count', async () => {
    const warnings: { requests?: number }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const batches: number[] = [];
    let release = () => {};
    const slow = {
      query: (text: string, params: unknown[][]) => {
        if (!text.includes('insert')) return Promise.resolve([]);
        batches.push(params[0]!.length);
        if (batches.length > 1) return Promise.resolve([]);
        return new Promise((resolve) => {
          release = () => resolve([]);
        });
      },
    } as unknown as Store;
    const counter = createUsageCounter({
      store: slow,
      clock: () => new Date('2026-06-30T12:00:00Z'),
      logger,
      flushEveryMs: 60_000,
      maxEntries: 10,
    });
    for (let i = 0; i < 100; i++) counter.record(`key-${i}`, 2);
    await new Promise((resolve) => setImmediate(resolve));
    // Ten sums start a write; ten more are held before it takes them; 80 requests are not counted.
    expect(batches).toEqual([20]);
    for (let i = 100; i < 200; i++) counter.record(`key-${i}`, 2);
    release();
    await counter.close();
    expect(batches).toEqual([20, 20]);
    expect(warnings.map((w) => w.requests).filter((n) => n !== undefined)).toEqual([160]);
  });
});

/** The store with a `close` that does nothing, so the test reads it after the service stopped. */
function unclosable(store: Store): Store {
  return { ...store, close: async () => {} };
}
