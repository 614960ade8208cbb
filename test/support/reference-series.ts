/**
 * An independent reference for the time-series options, written from the documented
 * semantics in plain TypeScript over a series' stored daily points. It shares no code
 * with the service (which computes everything in SQL): calendar arithmetic, buckets,
 * aggregation, fill and transforms are all done here again, on numbers.
 */

export interface DailyPoint {
  date: string;
  value: number;
}

export interface ReferenceOptions {
  interval: 'day' | 'week' | 'month' | 'quarter' | 'year';
  aggregation: 'sum' | 'avg' | 'min' | 'max' | 'first' | 'last';
  fill: 'none' | 'null' | 'zero' | 'previous';
  transform: 'moving_average' | 'change' | 'percent_change' | 'cumulative_sum' | null;
  window: number;
}

export interface ReferencePoint {
  date: string;
  value: number | null;
  count: number;
}

/** The points the service should answer for one series (its whole stored history in `points`, ascending). */
export function referenceSeries(
  points: readonly DailyPoint[],
  from: string | null,
  to: string | null,
  o: ReferenceOptions,
): ReferencePoint[] {
  if (points.length === 0) return [];
  const first = points[0]!.date;
  const last = points[points.length - 1]!.date;
  const lo = from !== null && from > first ? from : first;
  const hi = to !== null && to < last ? to : last;
  if (lo > hi) return [];

  const start = bucketOf(lo, o.interval);
  const end = bucketOf(hi, o.interval);
  const firstBucket = bucketOf(first, o.interval);
  // The days each bucket aggregates: the first bucket of the range only from `lo`, none after `hi`.
  const days = new Map<string, DailyPoint[]>();
  for (const p of points) {
    if (p.date > hi || (p.date < lo && bucketOf(p.date, o.interval) === start)) continue;
    const b = bucketOf(p.date, o.interval);
    days.set(b, [...(days.get(b) ?? []), p]);
  }
  const aggregated = (b: string): number | null => {
    const values = (days.get(b) ?? []).map((p) => p.value);
    if (values.length === 0) return null;
    switch (o.aggregation) {
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
  };
  // Filled values, for buckets from the series' first one (no fill before a series starts).
  const filled = new Map<string, number | null>();
  let carried: number | null = null;
  for (let b = firstBucket; b <= end; b = next(b, o.interval, 1)) {
    const v = aggregated(b);
    if (v !== null) carried = v;
    filled.set(b, v !== null ? v : o.fill === 'zero' ? 0 : o.fill === 'previous' ? carried : null);
  }
  const valueAt = (b: string): number | null => filled.get(b) ?? null;

  const out: ReferencePoint[] = [];
  let running = 0;
  for (let b = start; b <= end; b = next(b, o.interval, 1)) {
    const count = (days.get(b) ?? []).length;
    const v = valueAt(b);
    if (v !== null && o.transform === 'cumulative_sum') running += v;
    if (o.fill === 'none' && count === 0) continue;
    out.push({ date: b, value: transform(b, v, running), count });
  }
  return out;

  function transform(b: string, v: number | null, cumulative: number): number | null {
    if (v === null) return null;
    const previous = valueAt(next(b, o.interval, -1));
    switch (o.transform) {
      case null:
        return v;
      case 'cumulative_sum':
        return cumulative;
      case 'change':
        return previous === null ? null : v - previous;
      case 'percent_change':
        return previous === null || previous === 0 ? null : ((v - previous) / Math.abs(previous)) * 100;
      case 'moving_average': {
        const window = Array.from({ length: o.window }, (_, i) => valueAt(next(b, o.interval, -i))).filter(
          (x): x is number => x !== null,
        );
        return window.reduce((a, x) => a + x, 0) / window.length;
      }
    }
  }
}

/** Monday of the ISO week, the 1st of the month, of the quarter's first month, January 1st. */
export function bucketOf(day: string, interval: ReferenceOptions['interval']): string {
  const [y, m] = day.split('-') as [string, string];
  switch (interval) {
    case 'day':
      return day;
    case 'week': {
      const t = Date.parse(`${day}T00:00:00Z`);
      const sinceMonday = (new Date(t).getUTCDay() + 6) % 7;
      return new Date(t - sinceMonday * 86_400_000).toISOString().slice(0, 10);
    }
    case 'month':
      return `${y}-${m}-01`;
    case 'quarter':
      return `${y}-${String(Math.floor((Number(m) - 1) / 3) * 3 + 1).padStart(2, '0')}-01`;
    case 'year':
      return `${y}-01-01`;
  }
}

/** The bucket `n` buckets after (before, for negative `n`) bucket `b`. */
function next(b: string, interval: ReferenceOptions['interval'], n: number): string {
  const [y, m, d] = b.split('-').map(Number) as [number, number, number];
  if (interval === 'day' || interval === 'week') {
    return new Date(Date.UTC(y, m - 1, d) + n * (interval === 'day' ? 1 : 7) * 86_400_000).toISOString().slice(0, 10);
  }
  const months = y * 12 + m - 1 + n * (interval === 'month' ? 1 : interval === 'quarter' ? 3 : 12);
  return `${String(Math.floor(months / 12)).padStart(4, '0')}-${String((months % 12) + 1).padStart(2, '0')}-01`;
}
