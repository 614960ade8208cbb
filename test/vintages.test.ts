import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriesStatement } from '../src/series/series-sql.js';
import type { TestService } from './support/service.js';
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
 * Vintages over the scenario of support/revision-scenario.ts, whose expected values are
 * read off its table by hand: the first value each day got, and the one standing at the
 * end of UTC day D + K (a write at 00:00 of the day after does not count).
 */

const RANGE = `project=${SCENARIO_SLUG}&start_date=${D1}&end_date=${D4}`;

const EXPECTED = {
  latest: { [D1]: 132, [D2]: 180, [D4]: 400 },
  first_release: { [D1]: 100, [D2]: 200, [D3]: 300, [D4]: 400 },
  known_after_0: { [D2]: 200, [D3]: 300 },
  known_after_1: { [D1]: 100, [D2]: 200, [D3]: 300 },
  known_after_7: { [D1]: 132, [D2]: 150, [D4]: 400 },
};

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`vintages on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;

    const rest = async (query: string): Promise<Record<string, number | null>> => {
      const res = await service.get(`/v1/metrics/${SCENARIO_METRIC}?${RANGE}${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const body = (await res.json()) as Record<string, { date: string; value: number | null }[]>;
      return Object.fromEntries(body[SCENARIO_SLUG]!.map((p) => [p.date, p.value]));
    };
    const graphql = async (args: string): Promise<Record<string, number | null>> => {
      const res = await service.graphql(
        `{ metric(name: staking_apy, projects: [${SCENARIO_ENUM}], from: "${D1}", to: "${D4}"${args}) ` +
          '{ series { points { date value } } } }',
      );
      const body = (await res.json()) as {
        data: { metric: { series: { points: { date: string; value: number | null }[] }[] } };
        errors?: unknown;
      };
      expect(body.errors).toBeUndefined();
      return Object.fromEntries(body.data.metric.series[0]!.points.map((p) => [p.date, p.value]));
    };

    beforeAll(async () => {
      service = await startScenarioService(kind);
    });
    afterAll(async () => {
      await service?.stop();
    });

    it('reads the first release of every day, a removed one included, on both APIs', async () => {
      expect(await rest('&vintage=first_release')).toEqual(EXPECTED.first_release);
      expect(await graphql(', vintage: FIRST_RELEASE')).toEqual(EXPECTED.first_release);
    });

    it('reads each day as known at the end of D + K for K = 0, 1 and 7, on both APIs', async () => {
      for (const k of [0, 1, 7] as const) {
        expect(await rest(`&vintage=known_after&lag_days=${k}`), `K = ${k}`).toEqual(EXPECTED[`known_after_${k}`]);
        expect(await graphql(`, vintage: KNOWN_AFTER, lagDays: ${k}`), `K = ${k}`).toEqual(
          EXPECTED[`known_after_${k}`],
        );
      }
    });

    it('does not count a write made at 00:00 UTC of the day after D + K', async () => {
      // D2 was revised to 180 at 2026-03-12T00:00:00Z: the end of D2 + 9 is just before it.
      expect((await rest('&vintage=known_after&lag_days=9'))[D2]).toBe(150);
      expect((await rest('&vintage=known_after&lag_days=10'))[D2]).toBe(180);
    });

    it('counts nothing written after as_of', async () => {
      const asOf = encodeURIComponent('2026-03-04T00:00:00Z');
      expect(await rest(`&vintage=first_release&as_of=${asOf}`)).toEqual({ [D1]: 100, [D2]: 200, [D3]: 300 });
      expect(await rest(`&vintage=known_after&lag_days=7&as_of=${asOf}`)).toEqual({
        [D1]: 110,
        [D2]: 200,
        [D3]: 300,
      });
      expect(await rest(`&vintage=known_after&lag_days=1&as_of=${encodeURIComponent('2026-03-03T00:00:00Z')}`)).toEqual(
        { [D1]: 100, [D2]: 200 },
      );
      expect(await graphql(', vintage: KNOWN_AFTER, lagDays: 7, asOf: "2026-03-04T00:00:00Z"')).toEqual({
        [D1]: 110,
        [D2]: 200,
        [D3]: 300,
      });
    });

    it('buckets, fills and transforms the chosen values', async () => {
      // 2026-03-01 is a Sunday: its ISO week starts on 02-23, the other days' on 03-02.
      expect(await rest('&vintage=first_release&interval=week&aggregation=sum')).toEqual({
        '2026-02-23': 100,
        '2026-03-02': 900,
      });
      expect(await rest('&vintage=known_after&lag_days=7&fill=zero&interval=day')).toEqual({
        [D1]: 132,
        [D2]: 150,
        [D3]: 0,
        [D4]: 400,
      });
      expect(await rest('&vintage=first_release&transform=change')).toEqual({
        [D1]: null,
        [D2]: 100,
        [D3]: 100,
        [D4]: 100,
      });
    });

    it('exports the chosen values', async () => {
      const res = await service.get(
        `/v1/export?metric=${SCENARIO_METRIC}&${RANGE}&vintage=known_after&lag_days=1&format=csv`,
      );
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(
        'metric,project,date,value\n' +
          [`${D1},100`, `${D2},200`, `${D3},300`].map((r) => `${SCENARIO_METRIC},${SCENARIO_SLUG},${r}\n`).join(''),
      );
    });

    it('answers a request without the new parameters exactly as before, and vintage=latest the same', async () => {
      const plain = await (await service.get(`/v1/metrics/${SCENARIO_METRIC}?${RANGE}`)).text();
      expect(plain).toBe(
        `{"${SCENARIO_SLUG}":[{"date":"${D1}","value":132},{"date":"${D2}","value":180},` +
          `{"date":"${D4}","value":400}]}`,
      );
      expect(await (await service.get(`/v1/metrics/${SCENARIO_METRIC}?${RANGE}&vintage=latest`)).text()).toBe(plain);
      const options = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null } as const;
      for (const asOf of [false, true]) {
        const before = seriesStatement({ layout: 'rest', options, extraFields: [], asOf });
        const latest = seriesStatement({ layout: 'rest', options, extraFields: [], asOf, vintage: 'latest' });
        expect(latest.text).toBe(before.text);
        expect(before.text).not.toContain('point_history h\n    where h.valid_from <= least');
      }
    });

    it('refuses a lag without known_after, known_after without a lag, and bad values, naming the parameter', async () => {
      const cases: [string, string, RegExp][] = [
        ['&lag_days=3', 'lag_days', /known_after/],
        ['&vintage=first_release&lag_days=3', 'lag_days', /known_after/],
        ['&vintage=known_after', 'lag_days', /needs a number of days/],
        ['&vintage=known_after&lag_days=3651', 'lag_days', /0 to 3650/],
        ['&vintage=known_after&lag_days=-1', 'lag_days', /0 to 3650/],
        ['&vintage=final', 'vintage', /latest, first_release, known_after/],
      ];
      for (const [query, param, message] of cases) {
        const res = await service.get(`/v1/metrics/${SCENARIO_METRIC}?${RANGE}${query}`);
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/problem\+json/);
        const body = (await res.json()) as { errors: { param: string; message: string }[] };
        expect(body.errors[0]!.param, query).toBe(param);
        expect(body.errors[0]!.message, query).toMatch(message);
      }
      const res = await service.graphql(
        `{ metric(name: staking_apy, projects: [${SCENARIO_ENUM}], lagDays: 2) { name } }`,
      );
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(body.errors[0]!.message).toMatch(/known_after/);
    });
  });
}
