import type { MetricDefinition } from '../catalog/load-catalog.js';
import { toEpochDay } from '../dates.js';
import { createRandom, seedFrom } from './prng.js';
import type { SamplePoint } from './generate-series.js';

/** One value a day held, and when it was written (ms since the epoch). */
export interface SampleVersion {
  value: number;
  writtenAt: number;
}

/** A day's writes, oldest first: the last is the value served now (the generated one). */
export interface SampleDayHistory {
  day: string;
  versions: SampleVersion[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * A plausible write history for one series' generated points, fully determined by the seed,
 * the series and `before`: day D is first written on D + 1 around the metric's `expectedBy`
 * (UTC); a metric with `stabilizationDays` > 0 then restates some days within that period
 * (one day: most days revised once the next day, as ETF flows are; a week: a share of days
 * restated once or twice within it, as fee totals are), and one with none is never revised.
 * Every write lies before `before` (the seeding instant): a write that would come later has
 * not happened yet, and a first write due later is made just before it. The final value of
 * each day is the generated one, so the served data does not depend on the history.
 */
export function sampleHistory(
  metric: MetricDefinition,
  slug: string,
  points: readonly SamplePoint[],
  seed: number,
  before: number,
): SampleDayHistory[] {
  const random = createRandom(seedFrom(seed, metric.name, slug, 'history'));
  const [hours, minutes] = metric.expectedBy.split(':').map(Number) as [number, number];
  const window = metric.stabilizationDays * DAY;
  return points.map((point, i) => {
    const due = (toEpochDay(point.day) + 1) * DAY + (hours * 60 + minutes) * 60_000;
    // Landed up to 40 minutes before the time it is expected by, never before its day ended.
    let first = due - Math.floor(random.next() * Math.min(40, hours * 60 + minutes)) * 60_000;
    // Due after the seeding: written just before it, newer days later.
    if (first >= before) first = before - (points.length - i) * 1000;
    const times = [first];
    if (window > 0) {
      const revisions = metric.stabilizationDays === 1 ? (random.next() < 0.7 ? 1 : 0) : restatements(random.next());
      for (let r = 0; r < revisions; r += 1) {
        const previous = times.at(-1)!;
        // Spread within what remains of the stabilization period, and strictly inside it.
        const left = first + window - previous - HOUR;
        times.push(previous + HOUR + Math.floor(random.next() * Math.max(0, left - HOUR)));
      }
    }
    const written = times.filter((t) => t < before);
    const versions = written.map((writtenAt, v) => ({
      writtenAt,
      value: v === written.length - 1 ? point.value : earlier(metric, point.value, random.next()),
    }));
    // An earlier figure equal to the one after it would not be a revision.
    return {
      day: point.day,
      versions: versions.filter((v, k) => k === versions.length - 1 || v.value !== versions[k + 1]!.value),
    };
  });
}

// Private

/** A week-long period: 45% of days restated once, a further 15% twice. */
function restatements(draw: number): number {
  return draw < 0.15 ? 2 : draw < 0.6 ? 1 : 0;
}

/**
 * A preliminary figure for a final `value`: a few percent off, low more often than high (late
 * data adds to a first count); whole for an integer metric.
 */
function earlier(metric: MetricDefinition, value: number, draw: number): number {
  const off = metric.stabilizationDays === 1 ? (draw - 0.5) * 0.3 : -0.12 * draw + 0.02;
  const raw = value * (1 + off);
  return metric.valueKind === 'integer' ? Math.round(raw) : Number(raw.toPrecision(8));
}
