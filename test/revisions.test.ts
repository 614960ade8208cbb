import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { upsertPoints } from '../src/db/write-points.js';
import { importFile, type ImportResult } from '../src/import/import-files.js';
import { projectId } from './support/project-id.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Revisions and as-of reads. A run of imports (revise a seeded day, add a day, revise it,
 * add a later day, remove the first) is replayed in a model here, and every as-of answer
 * of both APIs is compared with what the model says was served at that instant.
 */

const METRIC = 'staking-apy';
const SLUG = CATALOG.byName.get(METRIC)!.projects[0]!;
/** The last seeded day, then two days after the seeded range. */
const [SEEDED, ADDED, LATER] = [TEST_LAST_DAY, '2026-07-05', '2026-07-06'];
const RANGE = `project=${SLUG}&start_date=2026-06-29&end_date=${LATER}`;

/** A day's value or its removal (null), as a file row says it. */
type Writes = Record<string, number | null>;

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`revisions and as-of on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;
    let dir: string;
    /** What each step wrote and the database's clock just after it committed. */
    const steps: { writes: Writes; after: string; result: ImportResult }[] = [];
    let seeded: Record<string, number>;
    let beforeAll_: string;

    const dbNow = async (): Promise<string> => {
      const [row] = await service.running.services.store.query<{ now: string }>(
        `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
      );
      return row!.now;
    };
    const step = async (name: string, writes: Writes): Promise<void> => {
      const path = join(dir, `${name}.csv`);
      const rows = Object.entries(writes).map(([day, value]) => `${METRIC},${SLUG},${day},${value ?? ''}`);
      await writeFile(path, `metric,project,date,value\n${rows.join('\n')}\n`);
      const result = await importFile(service.running.services.store, CATALOG, path);
      steps.push({ writes, after: await dbNow(), result });
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    /** The model: the seeded values, then each step's writes up to and including step `upTo`. */
    const servedAfter = (upTo: number): Record<string, number> => {
      const days: Record<string, number | null> = { ...seeded };
      for (const { writes } of steps.slice(0, upTo + 1)) Object.assign(days, writes);
      return Object.fromEntries(
        Object.entries(days)
          .filter((e): e is [string, number] => e[1] !== null)
          .sort(([a], [b]) => a.localeCompare(b)),
      );
    };
    const restAsOf = async (asOf: string, extra = ''): Promise<Record<string, number>> => {
      const res = await service.get(`/v1/metrics/${METRIC}?${RANGE}&as_of=${encodeURIComponent(asOf)}${extra}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as Record<string, { date: string; value: number }[]>;
      expect(Object.keys(body)).toEqual([SLUG]);
      return Object.fromEntries(body[SLUG]!.map((p) => [p.date, p.value]));
    };

    beforeAll(async () => {
      service = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'metrics-revisions-'));
      const res = await service.get(`/v1/metrics/${METRIC}?${RANGE}`);
      seeded = Object.fromEntries(
        ((await res.json()) as Record<string, { date: string; value: number }[]>)[SLUG]!.map((p) => [p.date, p.value]),
      );
      expect(Object.keys(seeded)).toEqual(['2026-06-29', SEEDED]);
      beforeAll_ = await dbNow();
      await step('revise-seeded-add-day', { [SEEDED]: 10.5, [ADDED]: 3.5 });
      await step('revise-added', { [ADDED]: 4.25 });
      await step('add-later', { [LATER]: 1 });
      await step('remove-seeded', { [SEEDED]: null });
    });

    afterAll(async () => {
      await service?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it('counts what each import did: added, revised, removed', () => {
      expect(steps.map((s) => (s.result.ok ? s.result.written : s.result))).toEqual([
        { added: 1, revised: 1, removed: 0 },
        { added: 0, revised: 1, removed: 0 },
        { added: 1, revised: 0, removed: 0 },
        { added: 0, revised: 0, removed: 1 },
      ]);
    });

    it('answers REST as_of with the values served at that instant, before, between and after every write', async () => {
      expect(await restAsOf(beforeAll_)).toEqual(servedAfter(-1));
      for (let i = 0; i < steps.length; i++) {
        const served = await restAsOf(steps[i]!.after);
        expect(served, `as of just after step ${i}`).toEqual(servedAfter(i));
      }
      // Step 2 added LATER: as of the end of step 1 it is absent, as of the end of step 2 present.
      expect(await restAsOf(steps[1]!.after)).not.toHaveProperty(LATER);
      expect(await restAsOf(steps[2]!.after)).toHaveProperty(LATER, 1);
      // Without as_of: what is served now, which is the last state.
      const now = (await (await service.get(`/v1/metrics/${METRIC}?${RANGE}`)).json()) as Record<
        string,
        { date: string; value: number }[]
      >;
      expect(Object.fromEntries(now[SLUG]!.map((p) => [p.date, p.value]))).toEqual(servedAfter(steps.length - 1));
    });

    it('reads a date as the end of that UTC day, and an instant with an offset as that instant', async () => {
      expect(await restAsOf('2000-01-01')).toEqual({});
      expect(await restAsOf('2999-12-31')).toEqual(servedAfter(steps.length - 1));
      const afterFirst = new Date(Date.parse(steps[0]!.after) + 1).toISOString();
      const inTokyo = new Date(Date.parse(afterFirst) + 9 * 3_600_000).toISOString().replace('Z', '+09:00');
      expect(await restAsOf(inTokyo)).toEqual(servedAfter(0));
    });

    it('aggregates buckets over the values as of the instant', async () => {
      const monthly = async (asOf: string) => restAsOf(asOf, '&interval=month&aggregation=sum');
      expect(await monthly(steps[0]!.after)).toEqual({ '2026-06-01': seeded['2026-06-29']! + 10.5, '2026-07-01': 3.5 });
      expect(await monthly(steps[2]!.after)).toEqual({
        '2026-06-01': seeded['2026-06-29']! + 10.5,
        '2026-07-01': 4.25 + 1,
      });
      expect(await monthly(steps[3]!.after)).toEqual({ '2026-06-01': seeded['2026-06-29']!, '2026-07-01': 4.25 + 1 });
    });

    it('answers GraphQL asOf the same way, with revisedAt telling when each served value was written', async () => {
      const query =
        `query ($asOf: DateTime) { metric(name: staking_apy, projects: [${SLUG}], ` +
        `from: "2026-06-29", to: "${LATER}", asOf: $asOf) {
        series { points { date value revisedAt } } } }`;
      // GraphQL instants have milliseconds: round up, so "just after the step" stays after it.
      const ms = (instant: string) =>
        new Date(Math.ceil(Date.parse(instant) + Number(instant.slice(23, 26)) / 1000)).toISOString();
      for (let i = 0; i < steps.length; i++) {
        const res = await service.graphql(query, { asOf: ms(steps[i]!.after) });
        const body = (await res.json()) as {
          data: { metric: { series: { points: { date: string; value: number; revisedAt: string }[] }[] } };
        };
        const points = body.data.metric.series[0]!.points;
        expect(Object.fromEntries(points.map((p) => [p.date, p.value])), `as of step ${i}`).toEqual(servedAfter(i));
        for (const p of points) {
          // The step that last wrote the day (the seed when none did) wrote it no later than the instant after it.
          const writer = steps.slice(0, i + 1).findLastIndex((s) => p.date in s.writes);
          const lowerBound =
            writer <= 0 ? (writer === 0 ? beforeAll_ : '1970-01-01T00:00:00Z') : steps[writer - 1]!.after;
          expect(Date.parse(p.revisedAt), `${p.date} as of step ${i}`).toBeGreaterThanOrEqual(
            Math.floor(Date.parse(lowerBound)),
          );
          expect(Date.parse(p.revisedAt)).toBeLessThanOrEqual(
            Date.parse(writer < 0 ? beforeAll_ : steps[writer]!.after),
          );
        }
      }
      // A date alone means the end of that UTC day, in GraphQL as in REST.
      const lastDay = steps.at(-1)!.after.slice(0, 10);
      for (const day of ['2020-01-01', lastDay]) {
        const res = await service.graphql(
          `{ metric(name: staking_apy, projects: [${SLUG}], from: "2026-06-29", ` +
            `to: "${LATER}", asOf: "${day}") { series { points { date value } } } }`,
        );
        const body = (await res.json()) as {
          data: { metric: { series: { points: { date: string; value: number }[] }[] } };
        };
        const graphql = Object.fromEntries((body.data.metric.series[0]?.points ?? []).map((p) => [p.date, p.value]));
        expect(graphql, day).toEqual(await restAsOf(day));
      }
      expect(await restAsOf(lastDay)).toEqual(servedAfter(steps.length - 1));
      const bad = await service.graphql(
        `{ metric(name: staking_apy, projects: [${SLUG}], asOf: "yesterday") { name } }`,
      );
      const error = (await bad.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(error.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(error.errors[0]!.message).toMatch(/RFC 3339/);
    });

    it(
      "reads an instant to the microsecond: as of a write's own time (the changes " +
        "feed's updatedAt) it is served, a microsecond before it is not",
      async () => {
        const feed = (await (await service.get(`/v1/changes?since=${encodeURIComponent(beforeAll_)}`)).json()) as {
          changes: { date: string; value: number | null; updatedAt: string }[];
        };
        const write = feed.changes.find((c) => c.date === ADDED && c.value === 4.25)!;
        const before = shiftMicros(write.updatedAt, -1);
        const after = shiftMicros(write.updatedAt, 1);
        expect(await restAsOf(write.updatedAt)).toHaveProperty(ADDED, 4.25);
        expect(await restAsOf(before)).toHaveProperty(ADDED, 3.5);
        const sinceRest = async (since: string) =>
          (
            (await (await service.get(`/v1/changes?since=${encodeURIComponent(since)}`)).json()) as {
              changes: { updatedAt: string }[];
            }
          ).changes.map((c) => c.updatedAt);
        expect(await sinceRest(write.updatedAt)).toContain(write.updatedAt);
        expect(await sinceRest(after)).not.toContain(write.updatedAt);
      },
    );

    it(
      'reads a GraphQL DateTime to the microsecond, as REST does, and refuses ' +
        'an instant that is no real day or time',
      async () => {
        const feed = (await (await service.get(`/v1/changes?since=${encodeURIComponent(beforeAll_)}`)).json()) as {
          changes: { date: string; value: number | null; updatedAt: string }[];
        };
        const write = feed.changes.find((c) => c.date === ADDED && c.value === 4.25)!;
        const valueAsOf = async (asOf: string) => {
          const res = await service.graphql(
            `query ($asOf: DateTime) { metric(name: staking_apy, projects: [${SLUG}], ` +
              `from: "${ADDED}", to: "${ADDED}", asOf: $asOf) { series { points { value ` +
              `} } } }`,
            { asOf },
          );
          return ((await res.json()) as { data: { metric: { series: { points: { value: number }[] }[] } } }).data.metric
            .series[0]!.points[0]!.value;
        };
        expect(await valueAsOf(write.updatedAt)).toBe(4.25);
        expect(await valueAsOf(shiftMicros(write.updatedAt, -1))).toBe(3.5);
        const since = async (instant: string) => {
          const res = await service.graphql(
            'query ($since: DateTime!) { changes(since: $since) { changes { updatedAt } } }',
            { since: instant },
          );
          return (
            (await res.json()) as { data: { changes: { changes: { updatedAt: string }[] } } }
          ).data.changes.changes.map((c) => c.updatedAt);
        };
        expect(await since(write.updatedAt)).toContain(write.updatedAt);
        expect(await since(shiftMicros(write.updatedAt, 1))).not.toContain(write.updatedAt);
        for (const bad of [
          '2023-02-29T12:00:00Z',
          '2026-04-31T10:00:00Z',
          '2026-06-30T24:00:00Z',
          '0001-01-01T00:00:00+00:01',
        ]) {
          const res = await service.graphql(
            'query ($asOf: DateTime) { metric(name: staking_apy, projects: [' + SLUG + '], asOf: $asOf) { name } }',
            { asOf: bad },
          );
          expect(res.status, bad).toBe(400);
          const body = (await res.json()) as {
            data?: unknown;
            errors: { message: string; extensions: { code: string } }[];
          };
          expect(body.data, bad).toBeUndefined();
          expect(body.errors[0]!.extensions.code, bad).toBe('BAD_USER_INPUT');
          expect(body.errors[0]!.message, bad).toMatch(/RFC 3339 .*\(in UTC, within the years 0001-9999\)/);
          expect(
            (await service.get(`/v1/metrics/${METRIC}?${RANGE}&as_of=${encodeURIComponent(bad)}`)).status,
            `REST ${bad}`,
          ).toBe(400);
        }
      },
    );

    it(
      "gives out write times to the microsecond, so a point's revisedAt or a " +
        "series' updatedAt passed back as asOf finds that write",
      async () => {
        const feed = (await (await service.get(`/v1/changes?since=${encodeURIComponent(beforeAll_)}`)).json()) as {
          changes: { project: string; date: string; value: number | null; updatedAt: string }[];
        };
        const write = feed.changes.find((c) => c.date === ADDED && c.value === 4.25)!;
        const newest = feed.changes.filter((c) => c.project === SLUG).at(-1)!;
        const read = async (asOf?: string) => {
          const res = await service.graphql(
            `query ($asOf: DateTime) { metric(name: staking_apy, projects: [${SLUG}], ` +
              `from: "${ADDED}", to: "${ADDED}", asOf: $asOf) {
          series { updatedAt points { value revisedAt } } } }`,
            { asOf },
          );
          return (
            (await res.json()) as {
              data: { metric: { series: { updatedAt: string; points: { value: number; revisedAt: string }[] }[] } };
            }
          ).data.metric.series[0]!;
        };
        const now = await read();
        expect(now.points).toEqual([{ value: 4.25, revisedAt: write.updatedAt }]);
        expect(now.updatedAt).toBe(newest.updatedAt);
        expect((await read(now.points[0]!.revisedAt)).points).toEqual([{ value: 4.25, revisedAt: write.updatedAt }]);
        expect((await read(shiftMicros(now.points[0]!.revisedAt, -1))).points[0]!.value).toBe(3.5);
        const catalog = (await (await service.get('/v1/metrics')).json()) as {
          metrics: { name: string; projects: { slug: string; updatedAt: string | null }[] }[];
        };
        expect(catalog.metrics.find((m) => m.name === METRIC)!.projects.find((p) => p.slug === SLUG)!.updatedAt).toBe(
          newest.updatedAt,
        );
      },
    );

    it(
      "answers a series' firstDate, lastDate and updatedAt as of the instant " + 'too, so nothing written later shows',
      async () => {
        const feed = (await (await service.get(`/v1/changes?since=${encodeURIComponent(beforeAll_)}`)).json()) as {
          changes: { project: string; date: string; value: number | null; updatedAt: string }[];
        };
        const coverage = async (asOf: string) => {
          const res = await service.graphql(
            `query ($asOf: DateTime) { metric(name: staking_apy, projects: [${SLUG}], ` +
              `asOf: $asOf) { series { firstDate lastDate updatedAt } } }`,
            { asOf },
          );
          return (
            (await res.json()) as {
              data: {
                metric: { series: { firstDate: string | null; lastDate: string | null; updatedAt: string | null }[] };
              };
            }
          ).data.metric.series[0]!;
        };
        const now = await coverage(steps.at(-1)!.after);
        expect(now).toEqual({
          firstDate: expect.any(String),
          lastDate: LATER,
          updatedAt: feed.changes.filter((c) => c.project === SLUG).at(-1)!.updatedAt,
        });
        // Before the later day was added: the seeded last day is the last, the revision of the added day the newest
        // write.
        expect(await coverage(steps[1]!.after)).toEqual({
          firstDate: now.firstDate,
          lastDate: ADDED,
          updatedAt: feed.changes.find((c) => c.date === ADDED && c.value === 4.25)!.updatedAt,
        });
        const seededOnly = await coverage(beforeAll_);
        expect(seededOnly.lastDate).toBe(SEEDED);
        expect(seededOnly.updatedAt! <= beforeAll_).toBe(true);
        expect(await coverage('2000-01-01')).toEqual({ firstDate: null, lastDate: null, updatedAt: null });
      },
    );

    it('keeps no revision for an identical re-import and leaves the ETag as it was', async () => {
      const history = async () =>
        (
          await service.running.services.store.query<{ n: number }>('select count(*)::integer as n from point_history')
        )[0]!.n;
      const etag = async () => (await service.get(`/v1/metrics/${METRIC}?${RANGE}`)).headers.get('etag');
      const [before, tagBefore] = [await history(), await etag()];
      const path = join(dir, 'same.csv');
      await writeFile(
        path,
        `metric,project,date,value\n${METRIC},${SLUG},${ADDED},4.250\n${METRIC},${SLUG},${LATER},1\n`,
      );
      const result = await importFile(service.running.services.store, CATALOG, path);
      expect(result.ok && result.written).toEqual({ added: 0, revised: 0, removed: 0 });
      expect(await history()).toBe(before);
      expect(await etag()).toBe(tagBefore);
    });

    it(
      "says an offset's + sent raw in the URL arrived as a space, for as_of " + "and the changes feed's since",
      async () => {
        // Not encoded, the + of "+05:30" is a space by the rules of URL queries.
        for (const path of [
          `/v1/metrics/${METRIC}?${RANGE}&as_of=2026-07-01T12:00:00+05:30`,
          '/v1/changes?since=2026-07-01T12:00:00.5+05:30',
        ]) {
          const res = await service.get(path);
          expect(res.status, path).toBe(400);
          const problem = (await res.json()) as { errors: { message: string }[] };
          expect(problem.errors[0]!.message, path).toMatch(
            /got "2026-07-01T12:00:00(\.5)? 05:30" \(a \+ in a URL query is read as a space: write it as %2B\)$/,
          );
        }
        const res = await service.get(`/v1/metrics/${METRIC}?${RANGE}&as_of=2026-07-01T12:00:00%2B05:30`);
        expect(res.status).toBe(200);
      },
    );

    it(
      'stamps a value corrected by hand in SQL with its write time: as_of finds ' +
        'one value either side, and the point can be removed later',
      async () => {
        const other = CATALOG.byName.get(METRIC)!.projects[1]!;
        const store = service.running.services.store;
        const path = join(dir, 'by-hand.csv');
        await writeFile(path, `metric,project,date,value\n${METRIC},${other},${LATER},2\n`);
        expect((await importFile(store, CATALOG, path)).ok).toBe(true);
        const imported = await dbNow();
        await new Promise((resolve) => setTimeout(resolve, 5));
        // An operator's fix, outside the import's write path: it sets the value only.
        const id = await projectId(store, METRIC, other);
        await store.query('update point set value = 3 where day = $1 and project_id = $2', [LATER, id]);
        const corrected = await dbNow();
        const valueAsOf = async (asOf: string) => {
          const res = await service.get(
            `/v1/metrics/${METRIC}?project=${other}&start_date=` +
              `${LATER}&end_date=${LATER}&as_of=${encodeURIComponent(asOf)}`,
          );
          return ((await res.json()) as Record<string, { value: number }[]>)[other]!.map((p) => p.value);
        };
        expect(await valueAsOf(imported)).toEqual([2]);
        expect(await valueAsOf(corrected)).toEqual([3]);
        // Removing it moves the hand-set value to the history; it was refused there as a duplicate key.
        await writeFile(path, `metric,project,date,value\n${METRIC},${other},${LATER},\n`);
        const removed = await importFile(store, CATALOG, path);
        expect(removed.ok && removed.written).toEqual({ added: 0, revised: 0, removed: 1 });
        expect(await valueAsOf(imported)).toEqual([2]);
        expect(await valueAsOf(corrected)).toEqual([3]);
        expect(await valueAsOf(await dbNow())).toEqual([]);
      },
    );

    it('refuses a malformed as_of with a problem naming it', async () => {
      // The last two are instants an offset moves out of the years 0001 to 9999 (PostgreSQL's): they were 500s.
      for (const bad of [
        'yesterday',
        '2026-02-30',
        '2026-06-30T25:00:00Z',
        '2026-06-30T12:00:00',
        '1719748800',
        '0001-01-01T00:30:00+01:00',
        '9999-12-31T23:00:00-05:00',
      ]) {
        const res = await service.get(`/v1/metrics/${METRIC}?${RANGE}&as_of=${encodeURIComponent(bad)}`);
        expect(res.status, bad).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const problem = (await res.json()) as { errors: { param: string; message: string }[] };
        expect(problem.errors).toEqual([
          {
            param: 'as_of',
            message: expect.stringMatching(/RFC 3339 instant .*\(in UTC, within the years 0001-9999\)/),
          },
        ]);
      }
    });
  });
}

const server = STORE_KINDS.find((k) => k.name === 'postgres')!;

describe.skipIf(!server.available)(
  'write times of writers that overlap, on a PostgreSQL server',
  { timeout: 60_000 },
  () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService(server);
    });
    afterAll(async () => service?.stop());

    it(
      'stamps a write that began before another committed, and wrote after it, ' +
        'after that one: as_of finds one value per day, the replaced one in between',
      async () => {
        const store = service.running.services.store;
        const id = await projectId(store, METRIC, SLUG);
        const day = '2026-07-10';
        const write = (value: number) => ({ projectId: id, day, value: String(value), extra: null });
        const clock = async () =>
          (
            await store.query<{ now: string }>(
              `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
            )
          )[0]!.now;
        let begun!: () => void;
        let goOn!: () => void;
        const hasBegun = new Promise<void>((resolve) => (begun = resolve));
        const mayGoOn = new Promise<void>((resolve) => (goOn = resolve));
        // A writer whose transaction begins now (a sync's series, a slow import's parsing) and writes later.
        const late = store.transaction(async (tx) => {
          await tx.query('select 1');
          begun();
          await mayGoOn;
          await upsertPoints(tx, [write(777)]);
        });
        await hasBegun;
        await store.transaction((tx) => upsertPoints(tx, [write(555)]));
        const between = await clock();
        await new Promise((resolve) => setTimeout(resolve, 20));
        goOn();
        await late;
        const after = await clock();

        const asOf = async (instant: string) => {
          const body = (await (
            await service.get(
              `/v1/metrics/${METRIC}?project=${SLUG}&start_date=` +
                `${day}&end_date=${day}&as_of=${encodeURIComponent(instant)}`,
            )
          ).json()) as Record<string, unknown[]>;
          return body[SLUG];
        };
        expect(await asOf(between)).toEqual([{ date: day, value: 555 }]);
        expect(await asOf(after)).toEqual([{ date: day, value: 777 }]);
        const [history] = await store.query<{ values: string }>(
          `select string_agg(value::text, ',' order by valid_from) as values from ` +
            `point_history where project_id = $1 and day = $2`,
          [id, day],
        );
        expect(history!.values).toBe('555');
      },
    );
  },
);

/** An instant written as UTC with microseconds (YYYY-MM-DDTHH:MM:SS.ffffffZ), moved by `micros`. */
function shiftMicros(instant: string, micros: number): string {
  const total = Date.parse(`${instant.slice(0, 19)}Z`) * 1000 + Number(instant.slice(20, 26)) + micros;
  const seconds = Math.floor(total / 1_000_000);
  return (
    `${new Date(seconds * 1000).toISOString().slice(0, 19)}` +
    `.${String(total - seconds * 1_000_000).padStart(6, '0')}` +
    `Z`
  );
}
