import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { CATALOG, parseCatalog } from '../src/catalog/load-catalog.js';
import type { ProjectDirectory } from '../src/db/project-directory.js';
import { toEpochDay } from '../src/dates.js';
import type { RawReadOptions, Store } from '../src/db/store.js';
import type { StoredSpan } from '../src/limits/request-cost.js';
import type { StoredSpans } from '../src/limits/stored-spans.js';
import { createRequestPreparer } from '../src/rest/prepared-requests.js';
import { readSeriesRows } from '../src/series/read-series.js';
import catalogJson from '../src/catalog/catalog.json' with { type: 'json' };

const metric = CATALOG.metrics[0]!;
const [first, second] = metric.projects;
const day = toEpochDay('2026-03-10');
const directory = (offset: number): ProjectDirectory => ({
  idOf: (_m, slug) => metric.projects.indexOf(slug) + offset,
  projectOf: () => undefined,
});

/** Stored spans that a test sets by hand, each change a new generation as a read that changed them. */
function fakeSpans(): StoredSpans & { set(slug: string, span: StoredSpan): void } {
  const spans = new Map<string, StoredSpan>();
  let generation = 0;
  return {
    of: (m, slug) => (m === metric.name ? spans.get(slug) : undefined),
    get generation() {
      return generation;
    },
    listening: () => {},
    written: () => {},
    settled: async () => {},
    set(slug, span) {
      spans.set(slug, span);
      generation += 1;
    },
  };
}

describe('prepared metric requests', () => {
  it('prepares a repeated query once and plans it once per directory', () => {
    const prepare = createRequestPreparer();
    const query = `project=${second},${first}&start_date=2026-01-01&end_date=2026-01-31`;
    const once = prepare(metric, query, day);
    expect(prepare(metric, query, day)).toBe(once);
    expect(once.key).toBe(`${metric.name}?${query}`);
    expect(once.request.slugs).toEqual([second, first]);
    const spans = fakeSpans();
    expect(once.price(spans)).toBe(once.price(spans));
    expect(once.price(spans)).toEqual({ cost: 1, span: { days: 31, warmUpDays: 0, buckets: 31 } });
    const one = directory(1);
    expect(once.plan(one)).toBe(once.plan(one));
    expect(once.plan(one).projects).toEqual([
      { slug: second, id: 2 },
      { slug: first, id: 1 },
    ]);
    expect(once.plan(directory(100)).projects.map((p) => p.id)).toEqual([101, 100]);
  });

  it('prices an omitted end date from the day it is asked on', () => {
    const prepare = createRequestPreparer();
    const query = `project=${first}&start_date=2026-03-01`;
    expect(prepare(metric, query, day).price(fakeSpans()).span.days).toBe(10);
    expect(prepare(metric, query, day + 1).price(fakeSpans()).span.days).toBe(11);
  });

  it("prices a kept query again once its series' stored days change", () => {
    const prepare = createRequestPreparer();
    const spans = fakeSpans();
    const prepared = prepare(metric, `project=${first}`, day);
    const before = prepared.price(spans);
    // the assumed ten years, both ends counted: 11
    expect(before.cost).toBe(Math.ceil((day - toEpochDay('2016-03-10') + 1) / 365));
    spans.set(first!, { first: toEpochDay('1996-03-11'), last: toEpochDay('2026-03-10') });
    const after = prepared.price(spans);
    expect(after).not.toBe(before);
    expect(after.cost).toBe(Math.ceil((toEpochDay('2026-03-10') - toEpochDay('1996-03-11') + 1) / 365));
    expect(prepared.price(spans)).toBe(after);
  });

  it('refuses a bad query every time it comes', () => {
    const prepare = createRequestPreparer();
    for (let i = 0; i < 2; i += 1) {
      expect(() => prepare(metric, `project=${first}&start_date=2026-02-30`, day)).toThrow(ApiError);
      expect(() => prepare(metric, `project=${first}&start_date=2026-03-02&end_date=2026-03-01`, day)).toThrow(
        /is after end date/,
      );
    }
  });

  it("keeps no very long query and shares nothing with another catalog's metric", () => {
    const prepare = createRequestPreparer();
    const long = `project=${first}${`,${first}`.repeat(200)}`;
    expect(prepare(metric, long, day)).not.toBe(prepare(metric, long, day));
    const other = parseCatalog(catalogJson).metrics[0]!;
    expect(other).not.toBe(metric);
    const query = `project=${first}`;
    expect(prepare(other, query, day).request.metric).toBe(other);
    expect(prepare(metric, query, day).request.metric).toBe(metric);
  });
});

describe('reading a prepared plan', () => {
  it(
    'hands the store the same frozen parameters each time, marked reused, ' + 'and fresh ones for another plan',
    async () => {
      const seen: (readonly unknown[])[] = [];
      const reused: (boolean | undefined)[] = [];
      const store = {
        queryRaw: async (_text: string, params: readonly unknown[], _signal: unknown, options?: RawReadOptions) => {
          seen.push(params);
          reused.push(options?.reusedParameters);
          return [];
        },
      } as unknown as Store;
      const prepare = createRequestPreparer();
      const plan = prepare(metric, `project=${first},${second}&start_date=2026-01-01`, day).plan(directory(1));
      await readSeriesRows(store, plan, 'rest', 100);
      await readSeriesRows(store, plan, 'rest', 100);
      await readSeriesRows(store, prepare(metric, `project=${first}`, day).plan(directory(1)), 'rest', 100);
      expect(seen[1]).toBe(seen[0]);
      expect(Object.isFrozen(seen[0])).toBe(true);
      expect(reused).toEqual([true, true, true]);
      expect(seen[0]).toContainEqual([1, 2]);
      expect(seen[0]).toContainEqual([first, second]);
      expect(seen[2]).not.toBe(seen[0]);
      expect(seen[2]).toContainEqual([1]);
    },
  );
});

describe('reading rows from the store', () => {
  // Emptied so that an array the collector has moved to the old generation no longer holds
  // the socket buffer its column bytes are views of (src/series/read-series.ts, toRows).
  it("hands back every row of a whole read and of a streamed one, and empties the driver's arrays", async () => {
    const alpha = () => ['1', 'alpha', '7', '2026-11-01T00:00:00Z', Buffer.from('[1]')];
    const beta = () => ['2', 'beta', '7', null, Buffer.from('[2]')];
    const given: unknown[][][] = [];
    const handedRows: unknown[][] = [];
    const hand = (rows: unknown[][]) => (given.push(rows), handedRows.push(...rows), rows);
    const store = {
      queryRaw: async () => hand([alpha(), beta()]),
      streamRaw: async function* () {
        yield hand([alpha()]);
        yield hand([beta()]);
      },
    } as unknown as Store;
    const plan = createRequestPreparer()(metric, `project=${first},${second}`, day).plan(directory(1));

    const whole = await readSeriesRows(store, plan, 'rest', 100);
    expect('whole' in whole && whole.whole.map((r) => [r.projectId, r.slug, r.updatedAt, String(r.points)])).toEqual([
      ['1', 'alpha', '2026-11-01T00:00:00Z', '[1]'],
      ['2', 'beta', null, '[2]'],
    ]);
    expect(given[0]).toEqual([]);

    const streamed = await readSeriesRows(store, plan, 'rest', 1);
    const batches: string[][] = [];
    for await (const batch of 'batches' in streamed ? streamed.batches : [])
      batches.push(batch.map((r) => `${String(r.slug)}=${String(r.points)}`));
    expect(batches).toEqual([['alpha=[1]'], ['beta=[2]']]);
    expect(given.slice(1)).toEqual([[], []]);
    expect(handedRows).toEqual([[], [], [], []]);
  });
});
