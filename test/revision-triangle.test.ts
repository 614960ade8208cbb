import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import type { ProjectDirectory } from '../src/db/project-directory.js';
import type { Queryable } from '../src/db/store.js';
import { priceTriangle, priceVintageHistory } from '../src/limits/history-cost.js';
import type { Vintage } from '../src/series/vintage.js';
import { projectId } from './support/project-id.js';
import type { TestService } from './support/service.js';
import { writeAt } from './support/timed-writes.js';
import { STORE_KINDS } from './support/stores.js';
import {
  D1,
  D2,
  D3,
  D4,
  SCENARIO_ENUM,
  SCENARIO_METRIC,
  SCENARIO_SLUG,
  startScenarioService,
} from './support/revision-scenario.js';

/**
 * Revision triangles over the scenario of support/revision-scenario.ts, each row worked
 * out by hand from its table. Percentages: D1 went 100 → 110 (+10 %) → 132 (+20 %); D2
 * went 200 → 150 (−25 %) → 180 (+20 %); D3 was removed (no percentage), D4 never revised.
 */

const EXPECTED_ROWS = [
  {
    date: D1,
    firstWrittenAt: '2026-03-02T10:00:00.000000Z',
    values: [null, 100, 132],
    latest: 132,
    revisionCount: 2,
    maxAbsRevisionPercent: 20,
  },
  {
    date: D2,
    firstWrittenAt: '2026-03-02T10:00:00.000000Z',
    values: [200, 200, 150],
    latest: 180,
    revisionCount: 2,
    maxAbsRevisionPercent: 25,
  },
  {
    date: D3,
    firstWrittenAt: '2026-03-03T09:00:00.000000Z',
    values: [300, 300, null],
    latest: null,
    revisionCount: 1,
    maxAbsRevisionPercent: null,
  },
  {
    date: D4,
    firstWrittenAt: '2026-03-09T08:00:00.000000Z',
    values: [null, null, 400],
    latest: 400,
    revisionCount: 0,
    maxAbsRevisionPercent: null,
  },
];

const PATH = `/v1/revisions/${SCENARIO_METRIC}?project=${SCENARIO_SLUG}`;

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`revision triangles on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;

    beforeAll(async () => {
      service = await startScenarioService(kind);
    });
    afterAll(async () => {
      await service?.stop();
    });

    it('answers REST with one row per day ever written, values at each lag, latest and revisions', async () => {
      const res = await service.get(`${PATH}&start_date=2026-02-20&end_date=2026-03-31&lags=0,1,7`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toEqual({
        metric: SCENARIO_METRIC,
        project: SCENARIO_SLUG,
        lags: [0, 1, 7],
        rows: EXPECTED_ROWS,
      });
    });

    it('answers GraphQL with the same rows', async () => {
      const res = await service.graphql(
        `{ revisions(name: staking_apy, project: ${SCENARIO_ENUM}, from: "${D1}", to: "${D4}", lags: [0, 1, 7]) ` +
          '{ date firstWrittenAt values latest revisionCount maxAbsRevisionPercent } }',
      );
      const body = (await res.json()) as { data: { revisions: unknown[] }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.data.revisions).toEqual(EXPECTED_ROWS);
    });

    it('keeps to the range and gives firstWrittenAt back as an as_of that reads that write', async () => {
      const res = await service.get(`${PATH}&start_date=${D2}&end_date=${D3}&lags=9,10`);
      const body = (await res.json()) as { rows: { date: string; firstWrittenAt: string; values: unknown[] }[] };
      expect(body.rows.map((r) => r.date)).toEqual([D2, D3]);
      // D2 was revised at 00:00 of 03-12: after the end of D2 + 9, within D2 + 10.
      expect(body.rows[0]!.values).toEqual([150, 180]);
      const asOf = encodeURIComponent(body.rows[1]!.firstWrittenAt);
      const served = await service.get(
        `/v1/metrics/${SCENARIO_METRIC}?project=${SCENARIO_SLUG}&start_date=${D3}&end_date=${D3}&as_of=${asOf}`,
      );
      expect(await served.json()).toEqual({ [SCENARIO_SLUG]: [{ date: D3, value: 300 }] });
    });

    it('writes values a double would change exactly, on both APIs', async () => {
      const store = service.running.services.store;
      const id = await projectId(store, SCENARIO_METRIC, SCENARIO_SLUG);
      const exact = '0.1234567890123456789';
      await writeAt(store, '2026-03-21T00:00:00Z', id, { '2026-03-20': exact });
      const rest = await (await service.get(`${PATH}&start_date=2026-03-20&end_date=2026-03-20&lags=0,1`)).text();
      expect(rest).toContain(`"values":[null,${exact}],"latest":${exact}`);
      const res = await service.graphql(
        `{ revisions(name: staking_apy, project: ${SCENARIO_ENUM}, from: "2026-03-20", to: "2026-03-20", ` +
          'lags: [0, 1]) { values latest } }',
      );
      expect(await res.text()).toContain(`"values":[null,${exact}],"latest":${exact}`);
    });

    it('refuses bad lags, ranges and projects, naming the parameter', async () => {
      const range = `&start_date=${D1}&end_date=${D4}`;
      const cases: [string, string, RegExp][] = [
        [`${PATH}${range}&lags=7,1`, 'lags', /strictly increasing/],
        [`${PATH}${range}&lags=1,1`, 'lags', /given twice/],
        [`${PATH}${range}&lags=0,3651`, 'lags', /0 to 3650/],
        [`${PATH}${range}&lags=a`, 'lags', /0 to 3650/],
        [`${PATH}${range}&lags=${Array.from({ length: 17 }, (_, i) => i).join(',')}`, 'lags', /at most 16/],
        [`${PATH}${range}&lags=`, 'lags', /at least one lag/],
        [`${PATH}${range}`, 'lags', /required/],
        [`${PATH}&start_date=2010-01-01&end_date=2026-01-01&lags=0`, 'end_date', /at most 3660 days/],
        [`${PATH}&start_date=${D4}&end_date=${D1}&lags=0`, 'start_date', /after end date/],
        [`${PATH}&start_date=2026-02-30&end_date=${D1}&lags=0`, 'start_date', /real calendar date/],
        [`/v1/revisions/${SCENARIO_METRIC}?start_date=${D1}&end_date=${D4}&lags=0`, 'project', /required/],
        [`/v1/revisions/${SCENARIO_METRIC}?project=nope${range}&lags=0`, 'project', /not a project/],
        [`${PATH}${range}&lags=0&as_of=2026-01-01`, 'as_of', /unknown parameter/],
      ];
      for (const [path, param, message] of cases) {
        const res = await service.get(path);
        expect(res.status, path).toBe(400);
        const body = (await res.json()) as { errors: { param: string; message: string }[] };
        expect(body.errors[0]!.param, path).toBe(param);
        expect(body.errors[0]!.message, path).toMatch(message);
      }
      expect((await service.get(`/v1/revisions/no-such-metric?project=x`)).status).toBe(404);
      const res = await service.graphql(
        `{ revisions(name: staking_apy, project: ${SCENARIO_ENUM}, from: "${D1}", to: "${D4}", lags: [3, 1]) ` +
          '{ date } }',
      );
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(body.errors[0]!.message).toMatch(/strictly increasing/);
    });
  });
}

describe('a triangle price', () => {
  it('pays for its cells per 365 and its days and history rows per 3,650, at least one unit', () => {
    expect(priceTriangle(4, 3, 0)).toBe(1);
    // 90 days × 6 cells = 540 / 365 = 1.48, + 90 / 3650: 2 units.
    expect(priceTriangle(90, 5, 0)).toBe(2);
    // A day revised 36,500 times costs ten more units.
    expect(priceTriangle(90, 5, 36_500)).toBe(12);
  });
});

describe('a vintage price', () => {
  const directory = { idOf: () => 1, projectOf: () => undefined } as unknown as ProjectDirectory;
  const request = (vintage: Vintage) => ({
    metric: CATALOG.byName.get(SCENARIO_METRIC)!,
    slugs: [SCENARIO_SLUG],
    from: null,
    to: null,
    vintage,
  });

  it('adds a unit per 3,650 history rows counted in the range, and asks nothing for latest', async () => {
    const asked: unknown[][] = [];
    const db = {
      query: async (_text: string, params: unknown[]) => {
        asked.push(params);
        return [{ rows: '7301' }];
      },
    } as unknown as Queryable;
    expect(await priceVintageHistory(db, request('latest'), directory)).toBe(0);
    expect(asked).toEqual([]);
    expect(await priceVintageHistory(db, request('first_release'), directory)).toBe(3);
    expect(asked).toEqual([[[1], null, null]]);
  });
});
