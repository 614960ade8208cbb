import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { ASSUMED_HISTORY_YEARS, priceRequest } from '../src/limits/request-cost.js';
import { removePoints, upsertPoints } from '../src/db/write-points.js';
import type { SeriesOptions } from '../src/series/series-options.js';
import { hashApiKey } from '../src/auth/api-keys.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { loadConfig } from '../src/config.js';
import { toEpochDay } from '../src/dates.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { createMemoryRateLimitStore } from '../src/limits/memory-bucket-store.js';
import { createRateLimiter, type RateLimitMeter, type RateLimitPolicy } from '../src/limits/rate-limiter.js';
import { heard, startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** One unit a second, five at most. */
const POLICY: RateLimitPolicy = { perMinute: 60, burst: 5 };
const CALLER = { id: 'env:0123456789ab', name: 'API_KEYS[0]' };

describe('rate limit configuration', () => {
  it(
    'defaults to 600 units a minute with bursts of 1200, takes 0 a minute ' +
      'as no default limit, and names a bad value',
    () => {
      expect(loadConfig({})).toMatchObject({ rateLimitPerMinute: 600, rateLimitBurst: 1200 });
      expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimitPerMinute).toBe(0);
      expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '-1', RATE_LIMIT_BURST: '0' })).toThrow(
        /RATE_LIMIT_PER_MINUTE[\s\S]*RATE_LIMIT_BURST/,
      );
    },
  );
});

describe('the in-memory token bucket', () => {
  it('starts full, lets the whole burst through at once, then refuses', () => {
    const store = createMemoryRateLimitStore();

    const taken = [1, 1, 1, 1, 1].map((cost) => store.take('k', cost, 0, POLICY));
    const refused = store.take('k', 1, 0, POLICY);

    expect(taken.map((o) => [o.allowed, o.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    expect(refused).toEqual({ allowed: false, remaining: 0, resetSeconds: 5, retryAfterSeconds: 1 });
  });

  it('refills at perMinute / 60 units a second and never beyond the burst', () => {
    const store = createMemoryRateLimitStore();
    store.take('k', 5, 0, POLICY);

    expect(store.take('k', 1, 999, POLICY).allowed).toBe(false);
    expect(store.take('k', 1, 1_000, POLICY)).toMatchObject({ allowed: true, remaining: 0 });
    expect(store.take('k', 1, 3_500, POLICY)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 4 });
    expect(store.take('k', 1, 3_600_000, POLICY)).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 1 });
  });

  it('asks a refused caller to retry once the missing units have refilled, in whole seconds rounded up', () => {
    const store = createMemoryRateLimitStore();
    store.take('k', 5, 0, POLICY);

    expect(store.take('k', 3, 500, POLICY)).toEqual({
      allowed: false,
      remaining: 0,
      resetSeconds: 5,
      retryAfterSeconds: 3,
    });
    expect(store.take('k', 3, 2_999, POLICY).retryAfterSeconds).toBe(1);
    expect(store.take('k', 3, 3_000, POLICY)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('takes nothing for a refused charge', () => {
    const store = createMemoryRateLimitStore();
    store.take('k', 4, 0, POLICY);

    expect(store.take('k', 2, 0, POLICY).allowed).toBe(false);
    expect(store.take('k', 1, 0, POLICY)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps one bucket per key', () => {
    const store = createMemoryRateLimitStore();
    store.take('a', 5, 0, POLICY);

    expect(store.take('b', 1, 0, POLICY)).toMatchObject({ allowed: true, remaining: 4 });
    expect(store.take('a', 1, 0, POLICY).allowed).toBe(false);
  });

  it('holds at most maxKeys buckets, dropping refilled ones before drained ones', () => {
    const store = createMemoryRateLimitStore({ maxKeys: 2 });
    store.take('drained', 5, 0, POLICY);
    store.take('sipped', 1, 0, POLICY);

    store.take('newcomer', 1, 2_000, POLICY);

    expect(store.size).toBe(2);
    expect(store.take('drained', 5, 2_000, POLICY).allowed).toBe(false);
    for (let i = 0; i < 1_000; i += 1) store.take(`key-${i}`, 1, 10_000 + i, POLICY);
    expect(store.size).toBe(2);
  });
});

describe('the rate limiter', () => {
  const clock = (start = 0) => {
    const time = { now: start };
    return [time, () => time.now] as const;
  };
  const headersOf = () => {
    const seen: Record<string, string>[] = [];
    return [seen, (h: Readonly<Record<string, string>>) => seen.push({ ...h })] as const;
  };

  it('charges one unit on open and counts it towards the first charge only', async () => {
    const [, now] = clock();
    const limiter = createRateLimiter({ perMinute: 60, burst: 10 }, { store: createMemoryRateLimitStore(), now });
    const [seen, onHeaders] = headersOf();

    const meter = await limiter.open(CALLER, onHeaders);
    await meter.charge(3);
    await meter.charge(2);

    expect(seen.map((h) => h.ratelimit)).toEqual(['"default";r=9;t=1', '"default";r=7;t=3', '"default";r=5;t=5']);
  });

  it('describes the bucket as draft-10 fields: q is the burst and w the seconds to refill it from empty', async () => {
    const [seen, onHeaders] = headersOf();

    await createRateLimiter(
      { perMinute: 600, burst: 1200 },
      { store: createMemoryRateLimitStore(), now: () => 0 },
    ).open(CALLER, onHeaders);

    expect(seen[0]).toEqual({ 'ratelimit-policy': '"default";q=1200;w=120', ratelimit: '"default";r=1199;t=1' });
  });

  it('charges a cost above the burst as the whole burst, so it passes from a full bucket', async () => {
    const [seen, onHeaders] = headersOf();
    const meter = await createRateLimiter(POLICY, { store: createMemoryRateLimitStore(), now: () => 0 }).open(
      CALLER,
      onHeaders,
    );

    await meter.charge(761);

    expect(seen.at(-1)?.ratelimit).toBe('"default";r=0;t=5');
  });

  it(
    "caps all of a request's charges together at the burst, so one of several " +
      'charges passes from a full bucket too',
    async () => {
      const [seen, onHeaders] = headersOf();
      const meter = await createRateLimiter(POLICY, { store: createMemoryRateLimitStore(), now: () => 0 }).open(
        CALLER,
        onHeaders,
      );

      // Two GraphQL fields of 4 units each: 8 units asked, the burst of 5 charged.
      await Promise.all([meter.charge(4), meter.charge(4)]);
      await meter.charge(4);

      expect(seen.map((h) => h.ratelimit)).toEqual(['"default";r=4;t=1', '"default";r=1;t=4', '"default";r=0;t=5']);
    },
  );

  it('asks a request refused in a later charge to retry once its earlier charges are there again too', async () => {
    const limiter = createRateLimiter(
      { perMinute: 60, burst: 10 },
      { store: createMemoryRateLimitStore(), now: () => 0 },
    );
    const meter = await limiter.open(CALLER, () => {});
    await meter.charge(6);
    await limiter.open(CALLER, () => {}); // another request of the key's

    const error = await Promise.resolve(meter.charge(7)).then(
      () => undefined,
      (e: unknown) => e,
    );

    // 3 units left; the retry pays 6 + 4 (the rest of the burst): 7 seconds, not the 1 this charge alone lacks.
    expect(error).toMatchObject({
      kind: 'rate-limited',
      message: 'this request costs 10 units and the key has 3 left (at most 10, refilled at 60 a minute); retry in 7 s',
      headers: { 'retry-after': '7', ratelimit: '"default";r=3;t=7' },
    });
  });

  it('says "1 unit", not "1 units", when the one unit a request pays at the door is not there', async () => {
    const limiter = createRateLimiter(
      { perMinute: 60, burst: 1 },
      { store: createMemoryRateLimitStore(), now: () => 0 },
    );
    await limiter.open(CALLER, () => {});

    const error = await Promise.resolve(limiter.open(CALLER, () => {})).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toMatchObject({
      message: 'this request costs 1 unit and the key has 0 left (at most 1, refilled at 60 a minute); retry in 1 s',
    });
  });

  it(
    'refuses with a 429 ApiError whose Retry-After covers the whole cost again, ' + 'and RateLimit whose t matches it',
    async () => {
      const [time, now] = clock();
      const limiter = createRateLimiter(POLICY, { store: createMemoryRateLimitStore(), now });
      await (await limiter.open(CALLER, () => {})).charge(5);
      time.now = 1_500;

      const meter = await limiter.open(CALLER, () => {});
      const error = await Promise.resolve(meter.charge(3)).then(
        () => undefined,
        (e: unknown) => e,
      );

      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        kind: 'rate-limited',
        status: 429,
        headers: { 'retry-after': '3', ratelimit: '"default";r=0;t=3', 'ratelimit-policy': '"default";q=5;w=5' },
      });
      await expect(limiter.open(CALLER, () => {})).rejects.toMatchObject({
        kind: 'rate-limited',
        headers: { 'retry-after': '1' },
      });
    },
  );

  it("applies a key's own limit instead of the defaults; 0 per minute means no limit and no fields", async () => {
    const limiter = createRateLimiter(
      { perMinute: 0, burst: 1 },
      { store: createMemoryRateLimitStore(), now: () => 0 },
    );
    const [own, onOwn] = headersOf();
    const [free, onFree] = headersOf();

    await limiter.open({ ...CALLER, id: 'db:1', ratePerMinute: 6, burst: 3 }, onOwn);
    // Nothing to wait on without a limit: the meter comes at once and charges nothing.
    const meter = limiter.open(CALLER, onFree);
    expect(meter).not.toBeInstanceOf(Promise);
    expect((meter as RateLimitMeter).charge(1_000_000)).toBeUndefined();

    expect(own).toEqual([{ 'ratelimit-policy': '"default";q=3;w=30', ratelimit: '"default";r=2;t=10' }]);
    expect(free).toEqual([]);
  });
});

describe('request cost', () => {
  const TODAY = '2026-06-30';
  const DAILY = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null } as const;
  const cost = (projects: number, from: string | null, to: string | null, options: Partial<SeriesOptions> = {}) =>
    priceRequest(
      { slugs: Array.from({ length: projects }, (_, i) => `p${i}`), from, to, options: { ...DAILY, ...options } },
      toEpochDay(TODAY),
      [],
    ).cost;

  it('is one unit per project-year asked for, rounded up, and never less than one', () => {
    expect(cost(1, '2026-06-30', '2026-06-30')).toBe(1);
    expect(cost(3, '2025-07-01', '2026-06-30')).toBe(3);
    expect(cost(3, '2025-06-30', '2026-06-30')).toBe(4);
    expect(cost(76, '2026-01-01', '2026-01-31')).toBe(7);
    expect(cost(76, '2025-07-01', '2026-06-30')).toBe(76);
  });

  it(`counts an omitted end as today and an omitted start as ${ASSUMED_HISTORY_YEARS} years before the end`, () => {
    const tenYearsToToday = 3_653; // 2016-06-30 .. 2026-06-30: 3 652 days apart (two leap days), both ends counted
    expect(cost(76, null, null)).toBe(Math.ceil((76 * tenYearsToToday) / 365));
    expect(cost(1, '2026-01-01', null)).toBe(cost(1, '2026-01-01', TODAY));
    expect(cost(2, null, '2020-12-31')).toBe(cost(2, '2010-12-31', '2020-12-31'));
  });

  it('prices bounds beyond that span like omitted ones: no point lies in the future or further back', () => {
    expect(cost(5, '1900-01-01', '2099-12-31')).toBe(cost(5, null, null));
    expect(cost(5, '2030-01-01', '2031-01-01')).toBe(1);
  });

  it(
    'counts buckets, not days, for an interval, and the days read at a tenth ' +
      'of that: a yearly view of ten years is cheap',
    () => {
      // Ten years of days cost ten units a project; as eleven yearly buckets, reading them costs one.
      expect(cost(1, null, null)).toBe(11);
      expect(cost(1, null, null, { interval: 'year' })).toBe(2);
      expect(cost(76, null, null, { interval: 'year' })).toBe(Math.ceil((76 * 3_653) / 3650));
      expect(cost(76, null, null, { interval: 'month' })).toBe(Math.ceil((76 * 3_653) / 3650));
      expect(cost(1, '2025-07-01', '2026-06-30', { interval: 'week' })).toBe(1);
    },
  );

  describe('with the days each series holds', () => {
    const span = (first: string, last: string) => ({ first: toEpochDay(first), last: toEpochDay(last) });
    const priced = (
      stored: (ReturnType<typeof span> | undefined)[],
      from: string | null,
      to: string | null,
      options: Partial<SeriesOptions> = {},
    ) =>
      priceRequest(
        { slugs: stored.map((_, i) => `p${i}`), from, to, options: { ...DAILY, ...options } },
        toEpochDay(TODAY),
        stored,
      );

    it('costs what it always did while every series lies within the assumed ten years', () => {
      const recent = span('2023-07-01', TODAY);
      expect(priced([recent, recent, undefined], null, null).cost).toBe(cost(3, null, null));
      expect(
        priced([recent], '2026-06-01', null, { interval: 'month', transform: 'moving_average', window: 3 }).cost,
      ).toBe(cost(1, '2026-06-01', null, { interval: 'month', transform: 'moving_average', window: 3 }));
    });

    it("prices an omitted start at a series' first stored day when it lies further back, series by series", () => {
      // 1950-07-01 .. 2026-06-30: 27,759 days, both ends counted (19 leap days).
      const old = span('1950-07-01', TODAY);
      expect(toEpochDay(TODAY) - toEpochDay('1950-07-01') + 1).toBe(27_759);
      expect(priced([old], null, null)).toEqual({
        cost: Math.ceil(27_759 / 365),
        span: { days: 27_759, warmUpDays: 0, buckets: 27_759 },
      });
      // One old series and two recent ones: the assumed span for each recent one, what the old one reads for it.
      const recent = span('2024-01-01', TODAY);
      expect(priced([recent, old, recent], null, null).cost).toBe(Math.ceil(27_759 / 365 + 2 * (3_653 / 365)));
      // A start given is read from there, not from the first stored day.
      expect(priced([old], '2000-01-01', null).cost).toBe(
        Math.ceil((toEpochDay(TODAY) - toEpochDay('2000-01-01') + 1) / 365),
      );
      // A yearly view reads the days at a tenth: 77 buckets, 27,759 days.
      expect(priced([old], null, null, { interval: 'year' }).cost).toBe(Math.ceil(27_759 / 3650));
    });

    it('prices days stored after today (a mistyped year) when the range reaches them', () => {
      const ahead = span('2025-07-01', '2036-06-30');
      const days = toEpochDay('2036-06-30') - toEpochDay('2026-06-01') + 1;
      expect(priced([ahead], '2026-06-01', null)).toEqual({
        cost: Math.ceil(days / 365),
        span: { days, warmUpDays: 0, buckets: days },
      });
      expect(priced([ahead], '2026-06-01', TODAY).cost).toBe(1);
    });
  });

  it('adds the days a moving average or a change reads before the range', () => {
    expect(cost(10, '2026-06-01', '2026-06-30', { interval: 'month', transform: 'moving_average', window: 120 })).toBe(
      Math.ceil((10 * (30 + 3621)) / 3650),
    );
    expect(cost(1, '2026-06-30', '2026-06-30', { transform: 'change' })).toBe(1);
  });

  it('adds the bucket before the range that a change and a percent change read', () => {
    // Yearly buckets from 2017 read 3,468 days, one unit a project; with 2016 before them (366 days), two.
    const days = toEpochDay(TODAY) - toEpochDay('2017-01-01') + 1;
    const year2016 = toEpochDay('2017-01-01') - toEpochDay('2016-01-01');
    expect([days, year2016]).toEqual([3_468, 366]);
    expect(cost(1, '2017-01-01', TODAY, { interval: 'year' })).toBe(1);
    for (const transform of ['change', 'percent_change'] as const) {
      const options = { ...DAILY, interval: 'year', transform } as const;
      const priced = priceRequest({ slugs: ['one'], from: '2017-01-01', to: TODAY, options }, toEpochDay(TODAY), []);
      expect(priced, transform).toEqual({ cost: 2, span: { days, warmUpDays: year2016, buckets: 10 } });
      expect(priced.cost).toBe(Math.ceil((days + year2016) / 3650));
    }
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`rate limits over HTTP on ${kind.name}`, () => {
    // One unit a minute: nothing refills noticeably while a test runs, so counts are exact.
    const KEYS = ['rl-rest', 'rl-shared', 'rl-other', 'rl-unauthorized'] as const;
    const SMALL = '/v1/metrics/token-price-usd?project=ethereum&start_date=2026-06-01&end_date=2026-06-30';
    const BIG = '/v1/metrics/etf-aum-change-pct';
    let service: TestService;

    beforeAll(async () => {
      service = await startTestService(kind, {
        API_KEYS: KEYS.join(','),
        RATE_LIMIT_PER_MINUTE: '1',
        RATE_LIMIT_BURST: '5',
      });
    });

    afterAll(async () => {
      await service?.stop();
    });

    const get = async (path: string, key: string) => {
      const res = await service.get(path, { key });
      const body = await res.text();
      return {
        res,
        status: res.status,
        body,
        ratelimit: res.headers.get('ratelimit'),
        policy: res.headers.get('ratelimit-policy'),
      };
    };
    const storedKey = async (name: string, limits: { ratePerMinute?: number; burst?: number }) => {
      const key = `${name}-0123456789abcdef`;
      await insertApiKey(service.running.services.store, name, hashApiKey(key), limits);
      return key;
    };
    const remaining = (field: string | null) => Number(/;r=(\d+)/.exec(field ?? '')?.[1]);

    it(
      'counts REST requests down in RateLimit, then answers a 429 problem with ' + 'Retry-After and both fields',
      async () => {
        const served = [];
        for (let i = 0; i < 5; i += 1) served.push(await get(SMALL, 'rl-rest'));
        const refused = await get(SMALL, 'rl-rest');

        expect(served.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
        expect(served.map((r) => remaining(r.ratelimit))).toEqual([4, 3, 2, 1, 0]);
        expect(served[0]!.ratelimit).toBe('"default";r=4;t=60');
        for (const r of served) expect(r.policy).toBe('"default";q=5;w=300');

        expect(refused.status).toBe(429);
        expect(refused.res.headers.get('content-type')).toBe('application/problem+json');
        expect(JSON.parse(refused.body)).toMatchObject({
          type: '/docs#problem-rate-limited',
          title: 'Too Many Requests',
          status: 429,
        });
        const retryAfter = refused.res.headers.get('retry-after');
        expect(retryAfter).toMatch(/^\d+$/);
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(retryAfter)).toBeLessThanOrEqual(60);
        expect(refused.ratelimit).toBe(`"default";r=0;t=${retryAfter}`);
        expect(refused.policy).toBe('"default";q=5;w=300');
      },
    );

    it('charges a 400 and an unknown metric one unit each, and carries the fields on them too', async () => {
      const key = await storedKey('rl-errors', { burst: 10 });

      const bad = await get('/v1/metrics/token-price-usd?start_date=2026-02-30', key);
      const unknown = await get('/v1/metrics/no-such-metric', key);

      expect([bad.status, unknown.status]).toEqual([400, 404]);
      expect([bad.ratelimit, unknown.ratelimit]).toEqual(['"default";r=9;t=60', '"default";r=8;t=120']);
    });

    it('shares the budget with GraphQL: a key used up over REST gets RATE_LIMITED with status 429 there', async () => {
      for (let i = 0; i < 5; i += 1) expect((await get(SMALL, 'rl-shared')).status).toBe(200);

      const res = await service.graphql(
        '{ metric(name: token_price_usd, projects: [ethereum]) { name } }',
        undefined,
        'rl-shared',
      );
      const body = (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };

      expect(res.status).toBe(429);
      expect(body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      expect(body.data ?? null).toBeNull();
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(res.headers.get('ratelimit')).toBe(`"default";r=0;t=${res.headers.get('retry-after')}`);
    });

    it('charges a GraphQL metric field its cost in the resolver, refusing one the bucket cannot cover', async () => {
      const key = await storedKey('rl-graphql', { burst: 10 });
      // 76 projects × 31 days: 7 units, 1 of them paid at the door.
      const january = '{ metric(name: etf_aum_change_pct, from: "2026-01-01", to: "2026-01-31") { name } }';

      const first = await service.graphql(january, undefined, key);
      await first.arrayBuffer();
      const second = await service.graphql(january, undefined, key);
      const body = (await second.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };

      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit')).toBe('"default";r=3;t=420');
      expect(second.status).toBe(429);
      expect(body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      // The refused field is null (it is nullable); nothing of its data was read.
      expect(body.data).toEqual({ metric: null });
      // 2 units left after the door; the whole 7 again needs 5 more at one a minute.
      const retryAfter = Number(second.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(240);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(second.headers.get('ratelimit')).toBe(`"default";r=2;t=${retryAfter}`);
    });

    it(
      'passes a GraphQL request whose metric fields together cost more than ' +
        'the burst from a full bucket, charging the burst',
      async () => {
        const key = await storedKey('rl-fields', { burst: 10 });
        // Two fields of 7 units each (76 projects × 31 days): 14 asked, the burst of 10 charged.
        const field = 'metric(name: etf_aum_change_pct, from: "2026-01-01", to: "2026-01-31") { name }';

        const res = await service.graphql(`{ a: ${field} b: ${field} }`, undefined, key);

        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({
          data: { a: { name: 'etf-aum-change-pct' }, b: { name: 'etf-aum-change-pct' } },
          // The price, though only the burst was taken.
          extensions: { cost: { units: 14 } },
        });
        expect(res.headers.get('ratelimit')).toBe('"default";r=0;t=600');
      },
    );

    it(
      "charges every further selection of a metric field's points (aliases of " +
        'points or of series) as the field again, not once for all',
      async () => {
        const key = await storedKey('rl-aliases', { burst: 100 });
        // 76 projects × 31 days: 7 units a read of the points.
        const fields = 'metric(name: etf_aum_change_pct, from: "2026-01-01", to: "2026-01-31")';
        const once = await service.graphql(`{ ${fields} { series { points { date value } } } }`, undefined, key);
        await once.arrayBuffer();
        expect(remaining(once.headers.get('ratelimit'))).toBe(93);
        // The same points again, and in another order (another statement), under aliases: three reads in all.
        const thrice = await service.graphql(
          `{ ${fields} { series { points { date value } again: points { value date ` +
            `} } other: series { points { date value } } } }`,
          undefined,
          key,
        );
        const body = (await thrice.json()) as {
          data: { metric: { series: { points: unknown[]; again: unknown[] }[]; other: { points: unknown[] }[] } };
        };
        expect(thrice.status).toBe(200);
        expect(body.data.metric.series[0]!.again.length).toBe(body.data.metric.series[0]!.points.length);
        expect(remaining(thrice.headers.get('ratelimit'))).toBe(93 - 3 * 7);
        // Dates and coverage of the series cost nothing more.
        const dates = await service.graphql(
          `{ ${fields} { series { firstDate lastDate points { date } } other: series { slug updatedAt } } }`,
          undefined,
          key,
        );
        await dates.arrayBuffer();
        expect(remaining(dates.headers.get('ratelimit'))).toBe(93 - 3 * 7 - 7);
      },
    );

    it(
      "charges the points read through the catalog's coverage as each series' " +
        'whole history; its dates cost nothing more',
      async () => {
        const key = await storedKey('rl-coverage', { burst: 100 });
        const whole = {
          from: null,
          to: null,
          options: { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null },
        } as const;
        const perSeries = priceRequest({ ...whole, slugs: ['one'] }, toEpochDay(TEST_LAST_DAY), []).cost;
        expect(perSeries).toBeGreaterThanOrEqual(10);

        const dates = await service.graphql('{ metrics { coverage { slug firstDate lastDate } } }', undefined, key);
        await dates.arrayBuffer();
        const points = await service.graphql('{ metrics { coverage { slug points { date value } } } }', undefined, key);
        const body = (await points.json()) as { errors?: { extensions?: { code?: string } }[] };

        expect(dates.status).toBe(200);
        expect(remaining(dates.headers.get('ratelimit'))).toBe(99);
        // The 99 units left pay for the points of floor(99 / perSeries) series; the rest are refused.
        expect(body.errors?.length).toBeGreaterThan(0);
        expect(new Set(body.errors!.map((e) => e.extensions?.code))).toEqual(new Set(['RATE_LIMITED']));
        expect(remaining(points.headers.get('ratelimit'))).toBe(99 - perSeries * Math.floor(99 / perSeries));
      },
    );

    it('charges a request for 76 projects over the whole range more than a small one', async () => {
      const key = await storedKey('rl-big', { burst: 2_000 });
      // The service's clock says TEST_LAST_DAY, whatever today is.
      const today = TEST_LAST_DAY;
      const allIssuers = CATALOG.byName.get('etf-aum-change-pct')!.projects;

      const small = await get(SMALL, key);
      const big = await get(BIG, key);

      expect([small.status, big.status]).toEqual([200, 200]);
      expect(remaining(small.ratelimit)).toBe(1_999);
      expect(allIssuers).toHaveLength(76);
      const bigCost = priceRequest(
        {
          slugs: allIssuers,
          from: null,
          to: null,
          options: { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null },
        },
        toEpochDay(today),
        [],
      ).cost;
      expect(bigCost).toBeGreaterThan(700);
      expect(remaining(big.ratelimit)).toBe(1_999 - bigCost);
    });

    it(
      'prices a series by the days it holds once they reach beyond ten years, ' +
        'in both APIs, and again once they are removed',
      async () => {
        const key = await storedKey('rl-stored-days', { burst: 10_000 });
        const { store, state, storedSpans } = service.running.services;
        const projectId = state.directory!.idOf('transaction-fail-total', 'solana')!;
        const ancient = '1936-07-01';
        const ahead = '2031-06-30';
        const rest = '/v1/metrics/transaction-fail-total?project=solana&start_date=2026-06-01&fill=null';
        const gql =
          '{ metric(name: transaction_fail_total, projects: [solana], fill: NULL) { series { points { date } } } }';
        const charged = async (send: () => Promise<Response>) => {
          const res = await send();
          await res.arrayBuffer();
          expect(res.status).toBe(200);
          return remaining(res.headers.get('ratelimit'));
        };
        await storedSpans.settled();
        const assumed = Math.ceil(3_653 / 365); // ten years to the test's today, both ends counted
        // June of the test's year is one unit over REST; GraphQL's field has no start, so the assumed ten years.
        let left = 10_000 - 1;
        expect(await charged(() => service.get(rest, { key }))).toBe(left);
        expect(await charged(() => service.graphql(gql, undefined, key))).toBe((left -= assumed));

        await heard(service, () =>
          upsertPoints(store, [
            { projectId, day: ancient, value: '1', extra: null },
            { projectId, day: ahead, value: '2', extra: null },
          ]),
        );
        await storedSpans.settled();
        const fromJune = toEpochDay(ahead) - toEpochDay('2026-06-01') + 1;
        const whole = toEpochDay(ahead) - toEpochDay(ancient) + 1;
        expect(await charged(() => service.get(rest, { key }))).toBe((left -= Math.ceil(fromJune / 365)));
        expect(await charged(() => service.graphql(gql, undefined, key))).toBe((left -= Math.ceil(whole / 365)));

        await heard(service, () =>
          removePoints(store, [
            { projectId, day: ancient },
            { projectId, day: ahead },
          ]),
        );
        await storedSpans.settled();
        expect(await charged(() => service.get(rest, { key }))).toBe((left -= 1));
        expect(await charged(() => service.graphql(gql, undefined, key))).toBe((left -= assumed));
      },
    );

    it("leaves every other key's budget alone", async () => {
      const other = await get(SMALL, 'rl-other');

      expect(other.status).toBe(200);
      expect(other.ratelimit).toBe('"default";r=4;t=60');
    });

    it("applies a key's own limit from the database, and exempts a key whose own rate is 0", async () => {
      const limited = await storedKey('rl-own', { ratePerMinute: 6, burst: 2 });
      const exempt = await storedKey('rl-exempt', { ratePerMinute: 0 });

      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await get(SMALL, limited)).status);
      const first = await get(SMALL, exempt);
      for (let i = 0; i < 10; i += 1) expect((await get(SMALL, exempt)).status).toBe(200);

      expect(statuses).toEqual([200, 200, 429]);
      expect((await get(SMALL, limited)).policy).toBe('"default";q=2;w=20');
      expect(first.status).toBe(200);
      expect([first.ratelimit, first.policy]).toEqual([null, null]);
    });

    it('never charges a request refused for its key', async () => {
      for (const key of [null, '', 'rl-unauthorized-not-quite']) {
        for (let i = 0; i < 6; i += 1) {
          const res = await service.get(SMALL, { key });
          expect(res.status).toBe(401);
          expect(res.headers.get('ratelimit')).toBeNull();
          await res.arrayBuffer();
        }
      }

      expect((await get(SMALL, 'rl-unauthorized')).ratelimit).toBe('"default";r=4;t=60');
    });
  });
}
