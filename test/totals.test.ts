import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { createOpenApiDocument } from '../src/rest/openapi-document.js';
import { enumName } from './support/graphql-names.js';
import { near, startAnalyticsFixture, VENUES, type AnalyticsFixture } from './support/analytics-fixture.js';
import { referenceTotal, type ReferenceTotalPoint, type TotalOptions } from './support/reference-analytics.js';
import { STORE_KINDS } from './support/stores.js';

interface TotalBody {
  metric: string;
  op: string;
  expected: string[];
  points: ReferenceTotalPoint[];
}

/** Requests whose answers are compared with the reference: ops, intervals, fills, transforms, ranges. */
const CASES: { from: string | null; to: string | null; options: Partial<TotalOptions> }[] = [
  { from: '2026-06-01', to: '2026-06-30', options: {} },
  { from: '2026-06-01', to: '2026-06-30', options: { fill: 'null' } },
  { from: '2026-06-01', to: '2026-06-30', options: { fill: 'null', requireComplete: true } },
  { from: '2026-06-01', to: '2026-06-30', options: { fill: 'zero', op: 'avg' } },
  { from: '2026-06-05', to: '2026-06-30', options: { fill: 'previous', op: 'median', transform: 'change' } },
  { from: '2026-06-03', to: '2026-06-29', options: { fill: 'null', op: 'count', transform: 'cumulative_sum' } },
  { from: '2026-05-20', to: null, options: { op: 'min', interval: 'week', transform: 'percent_change' } },
  { from: '2026-04-15', to: '2026-06-30', options: { op: 'max', interval: 'week', aggregation: 'max' } },
  { from: null, to: null, options: { interval: 'month', transform: 'moving_average', window: 3 } },
  { from: '2025-08-10', to: '2026-06-30', options: { interval: 'month', fill: 'null', op: 'median' } },
  { from: null, to: '2025-09-30', options: { interval: 'week', fill: 'null' } },
  { from: '2026-06-08', to: '2026-06-20', options: { requireComplete: true, transform: 'moving_average', window: 4 } },
];

const DEFAULTS: TotalOptions = {
  interval: 'day',
  aggregation: 'sum',
  fill: 'none',
  transform: null,
  window: 7,
  op: 'sum',
  requireComplete: false,
};

function totalQuery(from: string | null, to: string | null, o: Partial<TotalOptions>, extra: Record<string, string>) {
  const q = new URLSearchParams(extra);
  if (from !== null) q.set('start_date', from);
  if (to !== null) q.set('end_date', to);
  for (const name of ['interval', 'aggregation', 'fill', 'transform', 'op'] as const) {
    const value = o[name];
    if (value !== undefined && value !== null) q.set(name, value);
  }
  if (o.window !== undefined) q.set('window', String(o.window));
  if (o.requireComplete) q.set('require_complete', 'true');
  return q.toString();
}

function expectTotal(actual: ReferenceTotalPoint[], expected: ReferenceTotalPoint[], label: string) {
  expect(
    actual.map((p) => p.date),
    label,
  ).toEqual(expected.map((p) => p.date));
  actual.forEach((p, i) => {
    const e = expected[i]!;
    expect({ ...p, value: null }, `${label} ${p.date}`).toEqual({ ...e, value: null });
    expect(near(p.value, e.value), `${label} ${p.date}: ${p.value} vs ${e.value}`).toBe(true);
  });
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`totals on ${kind.name}`, () => {
    let fx: AnalyticsFixture;

    beforeAll(async () => {
      fx = await startAnalyticsFixture(kind);
    }, 120_000);
    afterAll(async () => fx?.stop());

    it('answers totals over a group as the reference computes them from the daily REST data', async () => {
      const daily = await fx.daily('volume-usd', VENUES);
      let sawMissing = false;
      let sawNotYetExpected = false;
      for (const c of CASES) {
        const o = { ...DEFAULTS, ...c.options };
        const res = await fx.svc.get(
          `/v1/totals/volume-usd?${totalQuery(c.from, c.to, c.options, { group: 'major-cex' })}`,
        );
        expect(res.status).toBe(200);
        const body = (await res.json()) as TotalBody;
        expect(body.metric).toBe('volume-usd');
        expect(body.op).toBe(o.op);
        expect(body.expected).toEqual(VENUES);
        const expected = referenceTotal(daily, VENUES, c.from, c.to, o);
        expectTotal(body.points, expected, JSON.stringify(c));
        sawMissing ||= expected.some((p) => p.missing.length > 0);
        sawNotYetExpected ||= expected.some((p) => p.contributors + p.missing.length < VENUES.length);
      }
      expect(sawMissing).toBe(true);
      expect(sawNotYetExpected).toBe(true);
    });

    it('names the missing members and nulls incomplete buckets under require_complete', async () => {
      const res = await fx.svc.get(
        '/v1/totals/volume-usd?group=major-cex&start_date=2026-06-09&end_date=2026-06-13&require_complete=true',
      );
      const body = (await res.json()) as TotalBody;
      const byDate = new Map(body.points.map((p) => [p.date, p]));
      expect(byDate.get('2026-06-09')!.missing).toEqual([]);
      expect(byDate.get('2026-06-09')!.value).not.toBeNull();
      expect(byDate.get('2026-06-11')!.missing).toEqual(['binance', 'okx']);
      expect(byDate.get('2026-06-11')!.contributors).toBe(4);
      expect(byDate.get('2026-06-11')!.value).toBeNull();
      expect(byDate.get('2026-06-12')!.missing).toEqual(['binance']);
    });

    it('does not count a member after its last stored day as missing', async () => {
      const body = (await (
        await fx.svc.get('/v1/totals/volume-usd?group=major-cex&start_date=2026-06-24&end_date=2026-06-30&fill=null')
      ).json()) as TotalBody;
      for (const p of body.points) expect(p.contributors + p.missing.length).toBe(p.date <= '2026-06-25' ? 6 : 5);
    });

    it('answers as of an instant from the values served then', async () => {
      const then = await fx.daily('volume-usd', VENUES, fx.asOf);
      const now = await fx.daily('volume-usd', VENUES);
      expect(then.get('binance')!.find((p) => p.date === '2026-06-01')!.value).not.toBe(1);
      for (const c of CASES.slice(0, 6)) {
        const o = { ...DEFAULTS, ...c.options };
        const extra = { group: 'major-cex', as_of: fx.asOf };
        const body = (await (
          await fx.svc.get(`/v1/totals/volume-usd?${totalQuery(c.from, c.to, c.options, extra)}`)
        ).json()) as TotalBody;
        expectTotal(body.points, referenceTotal(then, VENUES, c.from, c.to, o), `as of ${JSON.stringify(c)}`);
      }
      const current = (await (
        await fx.svc.get('/v1/totals/volume-usd?group=major-cex&start_date=2026-06-01')
      ).json()) as TotalBody;
      expectTotal(current.points, referenceTotal(now, VENUES, '2026-06-01', null, DEFAULTS), 'now');
    });

    it('keeps an integer metric whole under SUM, MIN and MAX, and takes projects instead of a group', async () => {
      const issuers = ['blackrock', 'fidelity', 'grayscale', 'bitwise'];
      const daily = await fx.daily('etf-num-products', issuers);
      for (const op of ['sum', 'min', 'max'] as const) {
        const res = await fx.svc.get(
          `/v1/totals/etf-num-products?project=${issuers.join(',')}&interval=month&op=${op}&start_date=2025-10-01`,
        );
        const text = await res.text();
        const body = JSON.parse(text) as TotalBody;
        expect(body.expected).toEqual(issuers);
        expect(text).not.toMatch(/"value":-?\d+\./);
        const o = { ...DEFAULTS, interval: 'month', aggregation: 'last', op } as const;
        expectTotal(body.points, referenceTotal(daily, issuers, '2025-10-01', null, o), op);
        expect(body.points.every((p) => Number.isInteger(p.value))).toBe(true);
      }
    });

    it('answers GraphQL total as REST does', async () => {
      const rest = (await (
        await fx.svc.get(
          '/v1/totals/volume-usd?group=major-cex&start_date=2026-06-01&fill=null&op=median&interval=week&transform=change',
        )
      ).json()) as TotalBody;
      const res = await fx.svc.graphql(`{ total(name: volume_usd, group: major_cex, from: "2026-06-01", fill: NULL,
        op: MEDIAN, interval: WEEK, transform: CHANGE) { name op expected points { date value contributors missing } } }`);
      const body = (await res.json()) as {
        data: { total: { name: string; op: string; expected: string[]; points: ReferenceTotalPoint[] } };
      };
      expect(body.data.total.name).toBe('volume-usd');
      expect(body.data.total.op).toBe('MEDIAN');
      expect(body.data.total.expected).toEqual(VENUES.map(enumName));
      expect(body.data.total.points).toEqual(rest.points.map((p) => ({ ...p, missing: p.missing.map(enumName) })));
      const asOf = await fx.svc.graphql(
        `{ total(name: volume_usd, projects: [binance, okx], from: "2026-06-01", to: "2026-06-20", asOf: "${fx.asOf}",
          requireComplete: true) { points { date value contributors missing } } }`,
      );
      const then = await fx.daily('volume-usd', ['binance', 'okx'], fx.asOf);
      const expected = referenceTotal(then, ['binance', 'okx'], '2026-06-01', '2026-06-20', {
        ...DEFAULTS,
        requireComplete: true,
      });
      const points = ((await asOf.json()) as { data: { total: { points: ReferenceTotalPoint[] } } }).data.total.points;
      expectTotal(
        points,
        expected.map((p) => ({ ...p, missing: p.missing.map(enumName) })),
        'graphql as of',
      );
    });

    it('refuses bad parameters, naming each', async () => {
      const refusals: [string, string][] = [
        ['group=major-cex&project=binance', 'group'],
        ['group=nope', 'group'],
        ['group=eth-treasuries', 'group'],
        ['group=major-cex&op=total', 'op'],
        ['group=major-cex&require_complete=yes', 'require_complete'],
        ['group=major-cex&interval=hour', 'interval'],
        ['project=binance,nope', 'project'],
        ['group=major-cex&start_date=2026-06-30&end_date=2026-06-01', 'start_date'],
        ['group=major-cex&limit=3', 'limit'],
      ];
      for (const [query, param] of refusals) {
        const res = await fx.svc.get(`/v1/totals/volume-usd?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/problem\+json/);
        const body = (await res.json()) as { errors: { param: string }[] };
        expect(
          body.errors.map((e) => e.param),
          query,
        ).toContain(param);
      }
      expect((await fx.svc.get('/v1/totals/no-such-metric')).status).toBe(404);
      for (const [args, name] of [
        ['group: major_cex, projects: [binance]', 'group'],
        ['group: eth_treasuries', 'group'],
        ['window: 3', 'window'],
        ['from: "2026-06-30", to: "2026-06-01"', 'from'],
      ]) {
        const res = await fx.svc.graphql(`{ total(name: volume_usd, ${args}) { name } }`);
        const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
        expect(body.errors[0]!.extensions.code, args).toBe('BAD_USER_INPUT');
        expect(body.errors[0]!.message, args).toContain(name);
      }
    });

    it('answers bodies that match the OpenAPI document, which a validator accepts', async () => {
      const document = (await (await fx.svc.get('/v1/openapi.json')).json()) as Record<string, unknown>;
      const ajv = new Ajv2020({ allErrors: true, strictSchema: false });
      addFormats.default(ajv);
      ajv.addSchema({ ...document, $id: 'https://metrics.test/openapi.json' });
      const schemaOf = (path: string) =>
        ajv.compile({
          $ref: `https://metrics.test/openapi.json#/paths/${path.replaceAll('/', '~1')}/get/responses/200/content/application~1json/schema`,
        });
      const answers: [string, string][] = [
        ['/v1/groups', '/v1/groups'],
        [
          '/v1/totals/{name}',
          '/v1/totals/volume-usd?group=major-cex&start_date=2026-06-01&fill=null&require_complete=true',
        ],
        ['/v1/totals/{name}', '/v1/totals/etf-num-products?group=us-spot-btc-etf-issuers&interval=month&op=median'],
        ['/v1/rank/{name}', '/v1/rank/volume-usd?group=major-cex&start_date=2026-06-26&end_date=2026-06-30&by=change'],
        [
          '/v1/rank/{name}',
          '/v1/rank/etf-num-products?group=us-spot-btc-etf-issuers&start_date=2026-01-01&end_date=2026-06-30&aggregation=avg',
        ],
      ];
      for (const [path, url] of answers) {
        const validate = schemaOf(path);
        const body = (await (await fx.svc.get(url)).json()) as unknown;
        expect(validate(body), `${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      expect(
        schemaOf('/v1/totals/{name}')({ metric: 'volume-usd', op: 'sum', expected: [], points: [{ date: 1 }] }),
      ).toBe(false);
    });

    it('accepts exactly the query parameters OpenAPI and /docs name', async () => {
      const document = createOpenApiDocument(CATALOG) as {
        paths: Record<string, { get: { parameters?: { name?: string; in?: string; $ref?: string }[] } }>;
        components: { parameters: Record<string, { name: string }> };
      };
      const docs = await (await fx.svc.get('/docs')).text();
      for (const [url, path] of [
        ['/v1/totals/volume-usd', '/v1/totals/{name}'],
        ['/v1/rank/volume-usd', '/v1/rank/{name}'],
        ['/v1/groups', '/v1/groups'],
      ] as const) {
        const res = await fx.svc.get(`${url}?no_such_parameter=1`);
        const message = ((await res.json()) as { errors: { message: string }[] }).errors[0]!.message;
        const accepted = /expected (.+)$/.exec(message)![1]!.split(', ');
        const named = (document.paths[path]!.get.parameters ?? [])
          .filter((p) => p.in !== 'path')
          .map((p) => p.name ?? document.components.parameters[p.$ref!.split('/').at(-1)!]!.name);
        expect(named.sort(), path).toEqual(accepted.filter((a) => a !== 'none').sort());
        for (const name of named) expect(docs, name).toMatch(new RegExp(`<code>[^<]*\\b${name}\\b`));
      }
    });

    it('answers any parameters with a 200 or a 400 problem naming them, never a crash or SQL', async () => {
      const names = [
        'project',
        'group',
        'start_date',
        'end_date',
        'interval',
        'aggregation',
        'fill',
        'transform',
        'window',
        'as_of',
        'op',
        'require_complete',
        'by',
        'order',
        'top',
      ];
      const value = fc.oneof(
        fc.constantFrom(
          'major-cex',
          'binance,okx',
          'binance,,okx',
          'l2-rollups',
          '2026-06-01',
          '2026-02-30',
          '0001-01-01',
          '9999-12-31',
          'week',
          'median',
          'percent_change',
          'moving_average',
          'true',
          '0',
          '-1',
          '1001',
          '7',
          "'; drop table point; --",
          '\u0000',
          'x'.repeat(300),
          '',
        ),
        fc.string({ maxLength: 12 }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/v1/totals/volume-usd', '/v1/rank/volume-usd', '/v1/totals/etf-num-products'),
          fc.array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 6 }),
          async (path, params) => {
            const res = await fx.svc.get(`${path}?${new URLSearchParams(params)}`);
            const text = await res.text();
            expect([200, 400], text).toContain(res.status);
            expect(text).not.toMatch(/select |stack|postgres/i);
            if (res.status === 400) {
              const body = JSON.parse(text) as { errors: { param: string }[] };
              expect(body.errors.length).toBeGreaterThan(0);
            }
          },
        ),
        { numRuns: 80 },
      );
    });

    it('lists the groups in both APIs', async () => {
      const rest = (await (await fx.svc.get('/v1/groups')).json()) as {
        groups: { name: string; projects: string[] }[];
      };
      expect(rest.groups.map((g) => g.name)).toContain('us-spot-btc-etf-issuers');
      expect(rest.groups.find((g) => g.name === 'major-cex')!.projects).toEqual(VENUES);
      expect((await fx.svc.get('/v1/groups?x=1')).status).toBe(400);
      const gql = (await (await fx.svc.graphql('{ groups { name description projects } }')).json()) as {
        data: { groups: { name: string; projects: string[] }[] };
      };
      expect(gql.data.groups.map((g) => g.name)).toEqual(rest.groups.map((g) => g.name));
      expect(gql.data.groups.find((g) => g.name === 'major-cex')!.projects).toEqual(VENUES.map(enumName));
    });
  });
}
