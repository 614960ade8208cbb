import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { toEpochDay } from '../src/dates.js';
import { migrate } from '../src/db/migrate.js';
import type { Queryable } from '../src/db/store.js';
import { upsertPoints } from '../src/db/write-points.js';
import { generateSeries } from '../src/seed/generate-series.js';
import { sampleHistory } from '../src/seed/sample-history.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { projectId } from './support/project-id.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The embedded default's sample data with its revision history (seedDatabase with
 * `history`), checked row by row in JS: revised metrics restate days in every series, their
 * last 90 days included; the others never; each day's history is one unbroken chain ending
 * at the served value; as-of reads agree with that chain; the changes feed starts after the
 * load; and later writes revise on top of it.
 */

const LAST_DAY = toEpochDay(TEST_LAST_DAY);
/** The seeding instant: a day and a half after the last day begins, so its last days are still being written. */
const BEFORE = Date.parse(`${TEST_LAST_DAY}T12:00:00Z`) + 24 * 3_600_000;

interface Row {
  metric: string;
  slug: string;
  day: string;
  value: string;
  from: string;
  to: string | null;
}

/** Every stored version: history rows (with their end) and current points (to = null). */
async function everyVersion(db: Queryable): Promise<Row[]> {
  const iso = (v: string) => `to_char(${v} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  return db.query<Row>(
    `select m.name as metric, p.slug, v.day::text as day, v.value::text as value, ${iso('v.f')} as from,
       case when v.t is null then null else ${iso('v.t')} end as to
     from (select project_id, day, value, valid_from as f, valid_to as t from point_history
           union all select project_id, day, value, written_at, null from point) v
     join project p on p.id = v.project_id join metric m on m.id = p.metric_id
     order by m.name, p.slug, v.day, v.f`,
  );
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`sample revision history on ${kind.name}`, { timeout: 240_000 }, () => {
    let service: TestService;
    let rows: Row[];
    const byDay = new Map<string, Row[]>();

    beforeAll(async () => {
      const opened = await kind.open();
      await migrate(opened.store);
      await seedDatabase(opened.store, CATALOG, { years: 1, lastDay: LAST_DAY, history: true, writtenBefore: BEFORE });
      rows = await everyVersion(opened.store);
      for (const row of rows) {
        const key = `${row.metric}/${row.slug}/${row.day}`;
        byDay.set(key, [...(byDay.get(key) ?? []), row]);
      }
      service = await startTestService(kind, {}, { store: opened });
    }, 240_000);

    afterAll(async () => {
      await service?.stop();
    });

    it('holds exactly the versions the generator gives, each at its write time', () => {
      const window = { firstDay: LAST_DAY - Math.round(365.25) + 1, lastDay: LAST_DAY, seed: 20_240_101 };
      for (const [name, slug] of [
        ['etf-flows-btc', 'bitcoin'],
        ['priority-fees', 'base'],
        ['price', 'solana'],
      ] as const) {
        const metric = CATALOG.metric(name);
        const expected = sampleHistory(metric, slug, generateSeries(metric, slug, window), window.seed, BEFORE).flatMap(
          ({ day, versions }) =>
            versions.map((v, i) => ({
              day,
              value: Number(v.value),
              from: new Date(v.writtenAt).toISOString().replace('Z', '000Z'),
              to:
                i + 1 < versions.length
                  ? new Date(versions[i + 1]!.writtenAt).toISOString().replace('Z', '000Z')
                  : null,
            })),
        );
        const stored = rows
          .filter((r) => r.metric === name && r.slug === slug)
          .map((r) => ({ day: r.day, value: Number(r.value), from: r.from, to: r.to }));
        expect(stored, name).toEqual(expected);
      }
    });

    it('restates days of every series of a revised metric, its last 90 days included, and never the others', () => {
      const recent = new Set(
        rows.filter((r) => r.to !== null && toEpochDay(r.day) > LAST_DAY - 90).map((r) => `${r.metric}/${r.slug}`),
      );
      const revisedAtAll = new Set(rows.filter((r) => r.to !== null).map((r) => r.metric));
      for (const metric of CATALOG.metrics) {
        if (metric.stabilizationDays > 0) {
          for (const slug of metric.projects)
            expect(recent, `${metric.name}/${slug}`).toContain(`${metric.name}/${slug}`);
        } else {
          expect(revisedAtAll, metric.name).not.toContain(metric.name);
        }
      }
      expect([...revisedAtAll].sort()).toEqual(
        CATALOG.metrics
          .filter((m) => m.stabilizationDays > 0)
          .map((m) => m.name)
          .sort(),
      );
    });

    it('keeps each day one unbroken chain of writes, all before the seeding, within the stabilization period', () => {
      // Problems are collected, not asserted one by one: there are about 140,000 days.
      const problems: string[] = [];
      for (const [key, versions] of byDay) {
        const metric = CATALOG.metric(key.split('/')[0]!);
        const first = Date.parse(versions[0]!.from);
        for (let i = 0; i < versions.length; i += 1) {
          const v = versions[i]!;
          if (Date.parse(v.from) >= BEFORE) problems.push(`${key}: written at ${v.from}, after the seeding`);
          if (i + 1 < versions.length) {
            if (v.to !== versions[i + 1]!.from) problems.push(`${key}: version ${i} ends at ${v.to}, not at the next`);
            if (v.value === versions[i + 1]!.value) problems.push(`${key}: version ${i + 1} changes nothing`);
          } else if (v.to !== null) problems.push(`${key}: the last version is not the served one`);
        }
        if (Date.parse(versions.at(-1)!.from) - first > metric.stabilizationDays * 86_400_000) {
          problems.push(`${key}: revised after its stabilization period`);
        }
        // Day D is first written on D + 1, before its expectedBy, unless that is after the seeding.
        const due = (toEpochDay(versions[0]!.day) + 1) * 86_400_000;
        if (due + 86_400_000 < BEFORE && first < due) problems.push(`${key}: written before its day ended`);
      }
      expect(problems.slice(0, 10)).toEqual([]);
      expect(byDay.size).toBeGreaterThan(100_000);
    });

    it('answers as_of with the version each day held then, by the chain computed here', async () => {
      const metric = 'etf-flows-btc';
      const instants = [LAST_DAY - 30, LAST_DAY - 5, LAST_DAY]
        .map((d) => new Date(d * 86_400_000 + 15 * 3_600_000).toISOString())
        .concat([new Date(BEFORE - 1).toISOString()]);
      for (const asOf of instants) {
        const expected: Record<string, number> = {};
        for (const [key, versions] of byDay) {
          if (!key.startsWith(`${metric}/`)) continue;
          const held = versions.find((v) => v.from <= asOf && (v.to === null || v.to > asOf));
          if (held !== undefined) expected[held.day] = Number(held.value);
        }
        const res = await service.get(
          `/v1/metrics/${metric}?project=bitcoin&start_date=2026-01-01&as_of=${encodeURIComponent(asOf)}`,
        );
        const body = (await res.json()) as { bitcoin: { date: string; value: number }[] };
        const served = Object.fromEntries(body.bitcoin.map((p) => [p.date, p.value]));
        expect(served, asOf).toEqual(Object.fromEntries(Object.entries(expected).filter(([d]) => d >= '2026-01-01')));
      }
    });

    it('dates each series by its newest write, and starts the changes feed after the load', async () => {
      const body = (await (await service.get('/v1/metrics')).json()) as {
        metrics: { name: string; projects: { slug: string; updatedAt: string }[] }[];
      };
      for (const metric of body.metrics.filter((m) => ['etf-flows-btc', 'priority-fees', 'price'].includes(m.name))) {
        for (const project of metric.projects) {
          const newest = rows
            .filter((r) => r.metric === metric.name && r.slug === project.slug)
            .map((r) => r.from)
            .sort()
            .at(-1);
          expect(project.updatedAt, `${metric.name}/${project.slug}`).toBe(newest);
        }
      }
      const feed = (await (await service.get('/v1/changes?since=2000-01-01')).json()) as { changes: unknown[] };
      expect(feed.changes).toEqual([]);
    });

    it('shows provisional points as of the seeding instant, only for metrics that have a stabilization period', async () => {
      const asOf = new Date(BEFORE - 1).toISOString();
      const statuses = async (name: string, project: string) => {
        const res = await service.graphql(
          `{ metric(name: ${name}, projects: [${project}], from: "2026-06-01", asOf: "${asOf}") ` +
            `{ series { points { date status } } } }`,
        );
        const body = (await res.json()) as { data: { metric: { series: { points: { status: string }[] }[] } } };
        return new Set(body.data.metric.series[0]!.points.map((p) => p.status));
      };
      expect(await statuses('etf_flows_btc', 'bitcoin')).toContain('PROVISIONAL');
      expect(await statuses('transaction_base_fee_total_usd', 'ethereum')).toEqual(
        new Set(['PROVISIONAL', 'REVISED', 'FINAL']),
      );
      expect(await statuses('price', 'ethereum')).toEqual(new Set(['FINAL']));
    });

    it('takes a later write as a revision on top of the sample history', async () => {
      const store = service.running.services.store;
      const id = await projectId(store, 'etf-flows-btc', 'bitcoin');
      const day = TEST_LAST_DAY;
      const before = byDay.get(`etf-flows-btc/bitcoin/${day}`)!;
      await store.transaction((tx) => upsertPoints(tx, [{ projectId: id, day, value: 123.25, extra: null }]));
      const [history] = await store.query<{ n: number }>(
        'select count(*)::integer as n from point_history where project_id = $1 and day = $2',
        [id, day],
      );
      expect(history!.n).toBe(before.length);
      const asOf = encodeURIComponent(before.at(-1)!.from);
      const res = await service.get(`/v1/metrics/etf-flows-btc?project=bitcoin&start_date=${day}&as_of=${asOf}`);
      expect(await res.json()).toEqual({ bitcoin: [{ date: day, value: Number(before.at(-1)!.value) }] });
    });
  });
}

describe('sample revision history', () => {
  it('is the same for the same seed, window and seeding instant, and differs for another seed', () => {
    const window = { firstDay: LAST_DAY - 364, lastDay: LAST_DAY, seed: 7 };
    const metric = CATALOG.metric('priority-fees');
    const once = () => sampleHistory(metric, 'base', generateSeries(metric, 'base', window), 7, BEFORE);
    expect(once()).toEqual(once());
    const other = sampleHistory(metric, 'base', generateSeries(metric, 'base', window), 8, BEFORE);
    expect(other.map((d) => d.versions.length)).not.toEqual(once().map((d) => d.versions.length));
  });
});
