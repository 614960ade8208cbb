/**
 * Independent references for cross-project totals and rankings, written from the documented
 * semantics over each member's stored daily points (as the plain REST answer gives them).
 * Per-member buckets come from reference-series.ts (itself independent of the service's
 * SQL); combining, completeness, transforms of the total and ranks are computed here.
 */
import { bucketOf, referenceSeries, type DailyPoint, type ReferenceOptions } from './reference-series.js';

export interface TotalOptions extends Omit<ReferenceOptions, 'transform'> {
  transform: ReferenceOptions['transform'];
  op: 'sum' | 'avg' | 'min' | 'max' | 'count' | 'median';
  requireComplete: boolean;
}

export interface ReferenceTotalPoint {
  date: string;
  value: number | null;
  contributors: number;
  missing: string[];
}

/** The total the service should answer over `members` (in order), each member's whole daily history given. */
export function referenceTotal(
  daily: ReadonlyMap<string, readonly DailyPoint[]>,
  members: readonly string[],
  from: string | null,
  to: string | null,
  o: TotalOptions,
): ReferenceTotalPoint[] {
  const memberOptions: ReferenceOptions = { ...o, fill: o.fill === 'none' ? 'null' : o.fill, transform: null };
  const warmBuckets = o.transform === 'moving_average' ? o.window - 1 : o.transform?.endsWith('change') ? 1 : 0;
  const cells = new Map<string, { slug: string; value: number | null }[]>();
  for (const slug of members) {
    const points = daily.get(slug) ?? [];
    const inRange = referenceSeries(points, from, to, memberOptions);
    let warm: typeof inRange = [];
    if (warmBuckets > 0 && from !== null && inRange.length > 0) {
      const start = bucketOf(from, o.interval);
      warm = referenceSeries(points, shift(start, o.interval, -warmBuckets), dayBefore(start), memberOptions);
    }
    for (const p of [...warm, ...inRange]) {
      const list = cells.get(p.date) ?? [];
      list.push({ slug, value: p.value });
      cells.set(p.date, list);
    }
  }
  const buckets = [...cells.keys()].sort();
  if (buckets.length === 0) return [];
  const grid: { date: string; value: number | null; expected: number; contributors: number; missing: string[] }[] = [];
  for (let b = buckets[0]!; b <= buckets[buckets.length - 1]!; b = shift(b, o.interval, 1)) {
    const here = cells.get(b) ?? [];
    const values = here.map((c) => c.value).filter((v): v is number => v !== null);
    const missing = here.filter((c) => c.value === null).map((c) => c.slug);
    let value = combine(o.op, values);
    if (o.requireComplete && missing.length > 0) value = null;
    grid.push({ date: b, value, expected: here.length, contributors: values.length, missing });
  }
  const outFrom = from === null ? '' : bucketOf(from, o.interval);
  const valueAt = (i: number) => (i >= 0 ? grid[i]!.value : null);
  const out: ReferenceTotalPoint[] = [];
  let running = 0;
  grid.forEach((g, i) => {
    if (g.date < outFrom) return;
    if (g.value !== null) running += g.value;
    if (o.fill === 'none' ? g.contributors === 0 : g.expected === 0) return;
    out.push({ date: g.date, value: transformed(g.value, i), contributors: g.contributors, missing: g.missing });
  });
  return out;

  function transformed(v: number | null, i: number): number | null {
    if (v === null) return null;
    const previous = valueAt(i - 1);
    switch (o.transform) {
      case null:
        return v;
      case 'cumulative_sum':
        return running;
      case 'change':
        return previous === null ? null : v - previous;
      case 'percent_change':
        return previous === null || previous === 0 ? null : ((v - previous) / Math.abs(previous)) * 100;
      case 'moving_average': {
        const window = Array.from({ length: o.window }, (_, k) => valueAt(i - k)).filter(
          (x): x is number => x !== null,
        );
        return window.reduce((a, x) => a + x, 0) / window.length;
      }
    }
  }
}

export interface ReferenceRankRow {
  rank: number;
  slug: string;
  value: number;
  previousValue: number | null;
  previousRank: number | null;
  change: number | null;
  changePercent: number | null;
  shareOfTotal: number | null;
}

export interface RankOptions {
  aggregation: ReferenceOptions['aggregation'];
  by: 'value' | 'change' | 'percent_change';
  order: 'desc' | 'asc';
  top: number;
}

/** The ranking the service should answer over `members` for the window `[from, to]`. */
export function referenceRanking(
  daily: ReadonlyMap<string, readonly DailyPoint[]>,
  members: readonly string[],
  from: string,
  to: string,
  o: RankOptions,
): { previousFrom: string; previousTo: string; rows: ReferenceRankRow[]; unranked: string[] } {
  const days = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
  const windowBack = (n: number): [string, string] => [addDays(from, -n * days), addDays(from, -(n - 1) * days - 1)];
  const [pf, pt] = windowBack(1);
  const [qf, qt] = windowBack(2);
  const members3 = members.map((slug) => {
    const points = daily.get(slug) ?? [];
    const value = aggregate(points, from, to, o.aggregation);
    const previous = aggregate(points, pf, pt, o.aggregation);
    const prior = aggregate(points, qf, qt, o.aggregation);
    return { slug, value, previous, key: keyOf(value, previous), previousKey: keyOf(previous, prior) };
  });
  const rankOf = (list: typeof members3, value: 'value' | 'previous', key: 'key' | 'previousKey') => {
    const ranked = list
      .filter((m) => m[value] !== null)
      .sort((a, b) => {
        const ka = a[key];
        const kb = b[key];
        if (ka === null || kb === null) return ka === kb ? compareSlugs(a.slug, b.slug) : ka === null ? 1 : -1;
        if (ka !== kb) return o.order === 'desc' ? kb - ka : ka - kb;
        return compareSlugs(a.slug, b.slug);
      });
    return new Map(ranked.map((m, i) => [m.slug, i + 1]));
  };
  const ranks = rankOf(members3, 'value', 'key');
  const previousRanks = rankOf(members3, 'previous', 'previousKey');
  const total = members3.reduce((a, m) => a + (m.value ?? 0), 0);
  const shared = o.aggregation === 'sum' || o.aggregation === 'last';
  const rows = members3
    .filter((m) => m.value !== null)
    .map(
      (m): ReferenceRankRow => ({
        rank: ranks.get(m.slug)!,
        slug: m.slug,
        value: m.value!,
        previousValue: m.previous,
        previousRank: previousRanks.get(m.slug) ?? null,
        change: m.previous === null ? null : m.value! - m.previous,
        changePercent: percent(m.value, m.previous),
        shareOfTotal: shared && total !== 0 ? (m.value! * 100) / total : null,
      }),
    )
    .sort((a, b) => a.rank - b.rank)
    .slice(0, o.top);
  return {
    previousFrom: pf,
    previousTo: pt,
    rows,
    unranked: members3.filter((m) => m.value === null).map((m) => m.slug),
  };

  function keyOf(now: number | null, before: number | null): number | null {
    if (o.by === 'value') return now;
    if (now === null || before === null) return null;
    return o.by === 'change' ? now - before : percent(now, before);
  }
}

/** Code-point order, as the service breaks ties (not a locale's). */
function compareSlugs(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function percent(now: number | null, before: number | null): number | null {
  return now === null || before === null || before === 0 ? null : ((now - before) / Math.abs(before)) * 100;
}

function aggregate(
  points: readonly DailyPoint[],
  from: string,
  to: string,
  aggregation: ReferenceOptions['aggregation'],
): number | null {
  const values = points.filter((p) => p.date >= from && p.date <= to).map((p) => p.value);
  if (values.length === 0) return null;
  switch (aggregation) {
    case 'sum':
      return values.reduce((a, v) => a + v, 0);
    case 'avg':
      return values.reduce((a, v) => a + v, 0) / values.length;
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'first':
      return values[0]!;
    case 'last':
      return values[values.length - 1]!;
  }
}

function combine(op: TotalOptions['op'], values: number[]): number | null {
  if (op === 'count') return values.length;
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  switch (op) {
    case 'sum':
      return values.reduce((a, v) => a + v, 0);
    case 'avg':
      return values.reduce((a, v) => a + v, 0) / values.length;
    case 'min':
      return sorted[0]!;
    case 'max':
      return sorted[sorted.length - 1]!;
    case 'median':
      return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.floor(sorted.length / 2)]!) / 2;
  }
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

function dayBefore(day: string): string {
  return addDays(day, -1);
}

/** The bucket `n` buckets after (before, for negative `n`) bucket `b`. */
function shift(b: string, interval: ReferenceOptions['interval'], n: number): string {
  if (interval === 'day' || interval === 'week') return addDays(b, n * (interval === 'day' ? 1 : 7));
  const [y, m] = b.split('-').map(Number) as [number, number];
  const months = y * 12 + m - 1 + n * (interval === 'month' ? 1 : interval === 'quarter' ? 3 : 12);
  return `${String(Math.floor(months / 12)).padStart(4, '0')}-${String((months % 12) + 1).padStart(2, '0')}-01`;
}
