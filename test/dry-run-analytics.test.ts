import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { syncCatalog } from '../src/db/sync-catalog.js';
import { projectId } from './support/project-id.js';
import { SCENARIO_ENUM, SCENARIO_METRIC, SCENARIO_SLUG, SCENARIO_WRITES } from './support/revision-scenario.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { writeAt } from './support/timed-writes.js';

/**
 * Dry runs of the paths added after the first dry runs (revisions, profiles, totals, ranks,
 * formulas, vintages): a dry run's units are what the request itself is then charged and
 * reports, and it leaves the key's balance as it was. Over the revision scenario
 * (support/revision-scenario.ts), so history rows are there to count.
 */

/** The service's time stands still: no bucket refills between two requests, so balances compare exactly. */
const NOW = new Date('2026-06-30T12:00:00Z');

/** Whole units left in the key's bucket, from an answer's `RateLimit` field. */
function remaining(res: Response): number {
  const match = /;r=(\d+)/.exec(res.headers.get('ratelimit') ?? '');
  if (match === null) throw new Error('no RateLimit field');
  return Number(match[1]);
}

const TRIANGLE =
  `/v1/revisions/${SCENARIO_METRIC}?project=${SCENARIO_SLUG}` +
  '&start_date=2016-07-01&end_date=2026-06-30&lags=0,1,7,30';
const PROJECTS = CATALOG.byName.get(SCENARIO_METRIC)!.projects.length;

interface GraphqlAnswer {
  data: unknown;
  errors?: { extensions: { code: string } }[];
  extensions: { cost: { units: number } };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`dry runs of analytics and revisions on ${kind.name}`, { timeout: 120_000 }, () => {
    let service: TestService;

    beforeAll(async () => {
      const prepared = await kind.open();
      await migrate(prepared.store);
      await syncCatalog(prepared.store, CATALOG);
      const id = await projectId(prepared.store, SCENARIO_METRIC, SCENARIO_SLUG);
      for (const { at, days } of SCENARIO_WRITES) await writeAt(prepared.store, at, id, days);
      service = await startTestService(
        kind,
        { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '100000', RESPONSE_CACHE_MB: '0' },
        { store: prepared, clock: () => NOW },
      );
    });
    afterAll(async () => {
      await service?.stop();
    });

    /** The key's balance now, read by a dry run (which leaves it as it is). */
    const balance = async () => remaining(await service.get(`${TRIANGLE}&dry_run=true`));

    /** A REST dry run's units, checked to leave the balance as it was. */
    const restDryRun = async (path: string): Promise<number> => {
      const before = await balance();
      const res = await service.get(`${path}&dry_run=true`);
      expect(res.status, await res.clone().text()).toBe(200);
      const body = (await res.json()) as { cost: { units: number }; rateLimit: { remaining: number } };
      expect(body.rateLimit.remaining).toBe(before);
      expect(await balance()).toBe(before);
      return body.cost.units;
    };

    /** What the request itself takes from the balance. */
    const restCharge = async (path: string): Promise<number> => {
      const before = await balance();
      const res = await service.get(path);
      expect(res.status, await res.clone().text()).toBe(200);
      return before - remaining(res);
    };

    it('prices a revision triangle as it is charged, the history rows counted', async () => {
      const units = await restDryRun(TRIANGLE);
      // 3,652 days × 5 cells per 365, plus (3,652 days + the scenario's 5 history rows) per 3,650: 51.03 → 52.
      expect(units).toBe(52);
      expect(await restCharge(TRIANGLE)).toBe(units);
    });

    it('prices a revision profile as it is charged, computed and then kept', async () => {
      const path = `/v1/metrics/${SCENARIO_METRIC}/profile?lookback_days=3650`;
      const first = await restDryRun(path);
      // Not kept yet: a unit per project per 3,650 days.
      expect(first).toBe(Math.max(1, PROJECTS));
      expect(await restCharge(path)).toBe(first);
      const kept = await restDryRun(path);
      expect(kept).toBe(1);
      expect(await restCharge(path)).toBe(kept);
    });

    it('refuses a bad dry_run or a bad argument on both paths as the request itself', async () => {
      for (const path of [TRIANGLE, `/v1/metrics/${SCENARIO_METRIC}/profile?lookback_days=180`]) {
        const res = await service.get(`${path}&dry_run=yes`);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { errors: { param: string }[] }).errors.map((e) => e.param)).toEqual(['dry_run']);
      }
      const bad =
        `/v1/revisions/${SCENARIO_METRIC}?project=${SCENARIO_SLUG}` +
        '&start_date=2026-03-01&end_date=2026-03-04&lags=7,1';
      const dry = await service.get(`${bad}&dry_run=true`);
      expect(dry.status).toBe(400);
      expect(await dry.json()).toEqual(await (await service.get(bad)).json());
      const profile = `/v1/metrics/${SCENARIO_METRIC}/profile?lookback_days=1`;
      const dryProfile = await service.get(`${profile}&dry_run=true`);
      expect(dryProfile.status).toBe(400);
      expect(await dryProfile.json()).toEqual(await (await service.get(profile)).json());
    });

    describe('GraphQL', () => {
      const post = async (query: string, dryRun: boolean): Promise<{ body: GraphqlAnswer; res: Response }> => {
        const res = await service.get('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(dryRun ? { 'x-dry-run': 'true' } : {}) },
          body: JSON.stringify({ query }),
        });
        return { body: (await res.json()) as GraphqlAnswer, res };
      };

      /** Checks a document's dry run against the request itself; returns the units. */
      const priced = async (query: string): Promise<number> => {
        const before = await balance();
        const dry = await post(query, true);
        expect(dry.body.errors).toBeUndefined();
        expect(dry.body.data).toBeNull();
        expect(await balance()).toBe(before);
        const real = await post(query, false);
        expect(real.body.errors, JSON.stringify(real.body.errors)).toBeUndefined();
        expect(real.body.extensions.cost.units).toBe(dry.body.extensions.cost.units);
        expect(before - remaining(real.res)).toBe(dry.body.extensions.cost.units);
        return dry.body.extensions.cost.units;
      };

      const range = 'from: "2016-07-01", to: "2026-06-30"';

      it('prices revisions as charged', async () => {
        const query =
          `{ revisions(name: staking_apy, project: ${SCENARIO_ENUM}, ${range}, lags: [0, 1, 7, 30]) ` + '{ date } }';
        expect(await priced(query)).toBe(52);
      });

      it('prices revisionProfile per metric and per selection, as charged', async () => {
        // Every metric's profile is priced, twice (two selections): some not kept yet, then kept.
        const query = '{ metrics { name a: revisionProfile(lookbackDays: 400) { days } b: revisionProfile { days } } }';
        expect(await priced(query)).toBeGreaterThan(2);
        expect(await priced(query)).toBe(2 * (CATALOG.metrics.length + CATALOG.derived.length));
      });

      it('prices total, rank and formula as charged, each field by itself and together', async () => {
        const total = `t: total(name: staking_apy, ${range}, interval: MONTH, op: AVG) { points { date value } }`;
        const rank = `r: rank(name: staking_apy, from: "2025-07-01", to: "2026-06-30", top: 3) { rows { slug } }`;
        const formula =
          `f: formula(expr: "2 * s", inputs: [{name: "s", metric: staking_apy}], ${range}) ` +
          '{ series { points { date } again: points { value } } }';
        const units = [];
        for (const field of [total, rank, formula]) units.push(await priced(`{ ${field} }`));
        for (const each of units) expect(each).toBeGreaterThan(1);
        expect(await priced(`{ ${total} ${rank} ${formula} }`)).toBe(units[0]! + units[1]! + units[2]!);
      });

      it('prices metric with a vintage (its history rows counted) and limitPerProject as charged', async () => {
        const field = (args: string) =>
          `{ metric(name: staking_apy, projects: [${SCENARIO_ENUM}], ${range}${args}) { series { points { date } } } }`;
        const latest = await priced(field(''));
        const first = await priced(field(', vintage: FIRST_RELEASE'));
        const known = await priced(field(', vintage: KNOWN_AFTER, lagDays: 3'));
        // 3,652 days of one project, a unit per 365 (11), plus a unit for the scenario's few history rows.
        expect(latest).toBe(Math.ceil(3652 / 365));
        expect(first).toBe(latest + 1);
        expect(known).toBe(latest + 1);
        expect(await priced(field(', limitPerProject: 5'))).toBeLessThanOrEqual(latest);
        // Read twice: the vintage's history rows are paid twice as well.
        const twice =
          `{ metric(name: staking_apy, projects: [${SCENARIO_ENUM}], ${range}, vintage: FIRST_RELEASE) ` +
          '{ series { points { date } again: points { value } } } }';
        expect(await priced(twice)).toBe(2 * first);
      });

      it('prices coverage points of every metric, the derived one included, as charged', async () => {
        const units = await priced('{ metrics { name coverage { slug points { date } } } }');
        expect(units).toBeGreaterThan(CATALOG.metrics.length);
      });

      it('prices fields that charge nothing at the one unit a request pays', async () => {
        expect(await priced('{ groups { name } usage { days { date } } hooks { id } }')).toBe(1);
      });

      it('refuses in a dry run the arguments the request refuses, as BAD_USER_INPUT', async () => {
        const bad = [
          `{ revisions(name: staking_apy, project: ${SCENARIO_ENUM}, ${range}, lags: [7, 1]) { date } }`,
          '{ metrics { revisionProfile(lookbackDays: 1) { days } } }',
          `{ total(name: staking_apy, from: "2026-06-30", to: "2026-01-01") { op } }`,
          `{ rank(name: staking_apy, from: "2026-01-01", to: "2026-06-30", top: 0) { from } }`,
          '{ formula(expr: "s / ", inputs: [{name: "s", metric: staking_apy}]) { expr } }',
          `{ metric(name: staking_apy, vintage: KNOWN_AFTER) { name } }`,
          `{ metric(name: staking_apy, limitPerProject: 0) { name } }`,
        ];
        for (const query of bad) {
          const dry = await post(query, true);
          expect(dry.body.errors?.[0]?.extensions.code, query).toBe('BAD_USER_INPUT');
          const real = await post(query, false);
          expect(real.body.errors?.[0]?.extensions.code, query).toBe('BAD_USER_INPUT');
        }
      });
    });
  });
}
