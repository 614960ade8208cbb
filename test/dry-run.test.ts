import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/auth/api-keys.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import type { Store } from '../src/db/store.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** The service's time stands still: no bucket refills between two requests, so balances compare exactly. */
const NOW = new Date('2026-06-30T12:00:00Z');

const FOUR_PROJECTS = 'project=arbitrum,ethereum,fogo,solana&start_date=2025-07-01&end_date=2026-06-30';
/** Four projects for 365 days each: a unit per project-year, so four units (computed by hand). */
const FOUR_UNITS = 4;
const GRAPHQL_FOUR =
  '{ metric(name: token_price_usd, projects: [arbitrum, ethereum, fogo, solana], from: "2025-07-01", ' +
  'to: "2026-06-30") { series { slug points { date value } } } }';

/** Whole units left in the key's bucket, from an answer's `RateLimit` field. */
function remaining(res: Response): number {
  const field = res.headers.get('ratelimit') ?? '';
  const match = /;r=(\d+)/.exec(field);
  if (match === null) throw new Error(`no RateLimit field: ${field}`);
  return Number(match[1]);
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`dry runs on ${kind.name}`, { timeout: 120_000 }, () => {
    let service: TestService;
    /**
     * Statements the service sent that read points: a dry run must send none. Background work
     * (usage counts, the webhook worker's look for due deliveries) reads no point and is not counted.
     */
    let statements = 0;
    const readsPoints = (text: string) => /\bpoint(?:_history)?\b/.test(text);
    const counting = (store: Store): Store => ({
      ...store,
      query: (text, params, signal) => {
        if (readsPoints(text)) statements += 1;
        return store.query(text, params, signal);
      },
      queryRaw: (text, params, signal, options) => {
        if (readsPoints(text)) statements += 1;
        return store.queryRaw(text, params, signal, options);
      },
      streamRaw: (text, params, batchRows, signal, options) => {
        if (readsPoints(text)) statements += 1;
        return store.streamRaw(text, params, batchRows, signal, options);
      },
    });

    beforeAll(async () => {
      service = await startTestService(
        kind,
        { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '100000', RESPONSE_CACHE_MB: '0' },
        { wrapStore: counting, clock: () => NOW },
      );
    });
    afterAll(async () => {
      await service?.stop();
    });
    beforeEach(() => {
      statements = 0;
    });

    /** The key's balance now, read by a dry run (which leaves it as it is). */
    const balance = async (key = TEST_KEY) => {
      const res = await service.get(`/v1/metrics/token-price-usd?${FOUR_PROJECTS}&dry_run=true`, { key });
      expect(res.status).toBe(200);
      return remaining(res);
    };

    it('answers a REST dry run with its cost and the key’s bucket, and charges the key nothing', async () => {
      const before = await balance();
      const res = await service.get(`/v1/metrics/token-price-usd?${FOUR_PROJECTS}&dry_run=true`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        cost: { units: FOUR_UNITS },
        rateLimit: { limit: 100_000, remaining: before, resetSeconds: expect.any(Number) },
      });
      expect(await balance()).toBe(before);
    });

    it('prices a REST request as the real request is then charged', async () => {
      const path = `/v1/metrics/token-price-usd?${FOUR_PROJECTS}`;
      const dry = (await (await service.get(`${path}&dry_run=true`)).json()) as { cost: { units: number } };
      const before = await balance();
      const real = await service.get(path);
      expect(real.status).toBe(200);
      expect(before - remaining(real)).toBe(dry.cost.units);
      expect(dry.cost.units).toBe(FOUR_UNITS);
    });

    it('prices every project of a metric since 2000 as charged, and reads no point for it', async () => {
      const projects = CATALOG.byName.get('token-price-usd')!.projects.join(',');
      const path = `/v1/metrics/token-price-usd?project=${projects}&start_date=2000-01-01&end_date=2026-06-30`;
      statements = 0;
      const dry = await service.get(`${path}&dry_run=true`);
      expect(statements).toBe(0);
      const { cost } = (await dry.json()) as { cost: { units: number } };
      // Priced for what can be read: at most ten years before the end (request-cost.ts), inclusive.
      const days = (Date.UTC(2026, 5, 30) - Date.UTC(2016, 5, 30)) / 86_400_000 + 1;
      const projectCount = projects.split(',').length;
      expect(cost.units).toBe(Math.ceil((projectCount * days) / 365));
      const before = await balance();
      const real = await service.get(path);
      expect(real.status).toBe(200);
      expect(statements).toBeGreaterThan(0);
      expect(before - remaining(real)).toBe(cost.units);
    });

    it('prices an export as charged, without reading, and serves dry_run=false as the parameter’s absence', async () => {
      const path =
        '/v1/export?metric=token-price-usd,transaction-base-fee-total-usd&project=ethereum&start_date=2024-07-01';
      statements = 0;
      const dry = await service.get(`${path}&dry_run=true`);
      expect(statements).toBe(0);
      expect(dry.status).toBe(200);
      const { cost } = (await dry.json()) as { cost: { units: number } };
      // Two metrics of one project from 2024-07-01 to 2026-06-30: two years each, four units.
      expect(cost.units).toBe(4);
      const before = await balance();
      const real = await service.get(path);
      const body = await real.text();
      expect(before - remaining(real)).toBe(cost.units);
      const explicit = await service.get(`${path}&dry_run=false`);
      expect(await explicit.text()).toBe(body);
      expect(explicit.headers.get('content-type')).toBe(real.headers.get('content-type'));
    });

    it('answers dry_run=false exactly as a request without it, charging as usual', async () => {
      const path = `/v1/metrics/token-price-usd?${FOUR_PROJECTS}`;
      const plain = await service.get(path);
      const before = await balance();
      const explicit = await service.get(`${path}&dry_run=false`);
      expect(explicit.status).toBe(200);
      expect(await explicit.text()).toBe(await plain.text());
      expect(before - remaining(explicit)).toBe(FOUR_UNITS);
    });

    it('refuses any other dry_run value with a 400 naming dry_run', async () => {
      for (const value of ['yes', 'TRUE', '1', '']) {
        const res = await service.get(`/v1/metrics/token-price-usd?${FOUR_PROJECTS}&dry_run=${value}`);
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        const problem = (await res.json()) as { errors: { param: string }[] };
        expect(problem.errors.map((e) => e.param)).toEqual(['dry_run']);
      }
      const twice = await service.get(`/v1/export?metric=token-price-usd&dry_run=true&dry_run=true`);
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as { errors: { param: string }[] }).errors[0]!.param).toBe('dry_run');
    });

    it('validates a dry run as the request itself: a bad date is the same 400', async () => {
      const bad = 'project=ethereum&start_date=2026-02-30';
      const dry = await service.get(`/v1/metrics/token-price-usd?${bad}&dry_run=true`);
      const real = await service.get(`/v1/metrics/token-price-usd?${bad}`);
      expect(dry.status).toBe(400);
      expect(await dry.json()).toEqual(await real.json());
    });

    it('bounds dry runs by a bucket of their own as large as the key’s, leaving the key’s own intact', async () => {
      const key = 'dry-run-flood-0123456789abcdef';
      await insertApiKey(service.running.services.store, 'dry-run-flood', hashApiKey(key), {
        ratePerMinute: 1,
        burst: 5,
      });
      const path = `/v1/metrics/token-price-usd?project=ethereum&start_date=2026-01-01&dry_run=true`;
      for (let i = 0; i < 5; i++) {
        const res = await service.get(path, { key });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { rateLimit: { remaining: number } }).rateLimit.remaining).toBe(5);
      }
      const flood = await service.get(path, { key });
      expect(flood.status).toBe(429);
      expect(Number(flood.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await flood.json()) as { detail: string }).detail).toMatch(/too many dry runs/);
      const gql = await service.get('/graphql', {
        key,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-dry-run': 'true' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(gql.status).toBe(429);
      // The key's own bucket was never touched: a real request still passes.
      const real = await service.get('/v1/metrics/token-price-usd?project=ethereum&start_date=2026-01-01', { key });
      expect(real.status).toBe(200);
      expect(remaining(real)).toBe(4);
    });

    it('charges the key as usual on routes that answer no dry run, whatever the request asks', async () => {
      const before = await balance();
      const document = await service.get('/v1/openapi.json?dry_run=true');
      expect(document.status).toBe(200);
      expect(remaining(document)).toBe(before - 1);
      const catalog = await service.get('/v1/metrics', { headers: { 'x-dry-run': 'true' } });
      expect(catalog.status).toBe(200);
      expect(remaining(catalog)).toBe(before - 2);
    });

    describe('GraphQL', () => {
      const post = (query: string, headers: Record<string, string> = {}, variables?: object) =>
        service.get('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
          body: JSON.stringify({ query, variables }),
        });

      it('answers x-dry-run: true with the price only, executing nothing and charging nothing', async () => {
        const before = await balance();
        statements = 0;
        const res = await post(GRAPHQL_FOUR, { 'x-dry-run': 'true' });
        expect(statements).toBe(0);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(`{"data":null,"extensions":{"cost":{"units":${FOUR_UNITS}}}}`);
        expect(await balance()).toBe(before);
        const real = await post(GRAPHQL_FOUR);
        const body = (await real.json()) as { data: unknown; extensions: { cost: { units: number } } };
        expect(body.data).not.toBeNull();
        expect(body.extensions).toEqual({ cost: { units: FOUR_UNITS } });
        expect(before - remaining(real)).toBe(FOUR_UNITS);
      });

      it('prices aliases, repeated reads, the changes feed and variables as execution charges them', async () => {
        const query =
          'query Q($from: Date) { a: metric(name: token_price_usd, projects: [ethereum, solana], from: $from, ' +
          'to: "2026-06-30") { series { points { date } again: points { value } } } ' +
          'b: metric(name: transaction_base_fee_total_usd, projects: [ethereum], from: $from, to: "2026-06-30") { series { slug } } ' +
          'changes(since: "2026-01-01T00:00:00Z", first: 2500) { endCursor } }';
        const variables = { from: '2025-07-01' };
        const dry = (await (await post(query, { 'x-dry-run': 'true' }, variables)).json()) as {
          extensions: { cost: { units: number } };
        };
        // a: two projects' year, read twice (4); b: one project-year (1); changes: 2,500 entries (3).
        expect(dry.extensions.cost.units).toBe(8);
        const before = await balance();
        const real = await post(query, {}, variables);
        expect(real.status).toBe(200);
        expect(before - remaining(real)).toBe(8);
        expect(((await real.json()) as { extensions: unknown }).extensions).toEqual({ cost: { units: 8 } });
      });

      it('refuses in a dry run what the request would refuse, with the same code', async () => {
        const bad =
          '{ metric(name: token_price_usd, projects: [ethereum], from: "2026-07-01", to: "2026-01-01") { name } }';
        const dry = (await (await post(bad, { 'x-dry-run': 'true' })).json()) as {
          errors: { extensions: { code: string } }[];
        };
        expect(dry.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
        const invalid = await post('{ nope }', { 'x-dry-run': 'true' });
        const body = (await invalid.json()) as { errors: { extensions: { code: string } }[]; extensions: unknown };
        expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(body.extensions).toEqual({ cost: { units: 0 } });
      });

      it('refuses an x-dry-run header other than true or false as BAD_USER_INPUT', async () => {
        const res = await post('{ __typename }', { 'x-dry-run': 'maybe' });
        expect(res.status).toBe(400);
        const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
        expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
        const off = await post('{ __typename }', { 'x-dry-run': 'false' });
        expect(await off.json()).toEqual({ data: { __typename: 'Query' }, extensions: { cost: { units: 1 } } });
      });

      it('prices a subscription at its one unit without subscribing', async () => {
        const res = await post('subscription { seriesUpdated(name: token_price_usd) { slug } }', {
          'x-dry-run': 'true',
          accept: 'text/event-stream',
        });
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('"extensions":{"cost":{"units":1}}');
      });

      it('puts the units charged in every keyed answer: errors, event streams and multipart too', async () => {
        const refused = (await (await post('{ nope }')).json()) as { extensions: unknown };
        expect(refused.extensions).toEqual({ cost: { units: 1 } });
        const parse = (await (await post('{ metric(')).json()) as { extensions: unknown };
        expect(parse.extensions).toEqual({ cost: { units: 1 } });
        const sse = await (await post(GRAPHQL_FOUR, { accept: 'text/event-stream' })).text();
        expect(sse).toContain(`"extensions":{"cost":{"units":${FOUR_UNITS}}}`);
        const parts = await (await post(GRAPHQL_FOUR, { accept: 'multipart/mixed' })).text();
        expect(parts).toContain(`"extensions":{"cost":{"units":${FOUR_UNITS}}}`);
      });
    });
  });
}
