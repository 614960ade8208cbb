import type { MetricDefinition, SampleSeries } from '../catalog/load-catalog.js';
import { fromEpochDay, weekday } from '../dates.js';
import { createRandom, seedFrom, type Random } from './prng.js';

export interface SamplePoint {
  day: string;
  value: number;
  extra: Record<string, number> | null;
}

export interface SampleWindow {
  /** Inclusive epoch days. */
  firstDay: number;
  lastDay: number;
  seed: number;
}

/** Share of days dropped at random, so series have a few gaps. */
const MISSING_DAY_RATE = 0.004;

/**
 * A plausible daily series for one project of one metric, fully determined by the
 * window and seed. Each project starts on its own day within the first third of the
 * window, so coverage differs; the model named in the catalog shapes the values.
 */
export function generateSeries(metric: MetricDefinition, slug: string, window: SampleWindow): SamplePoint[] {
  const random = createRandom(seedFrom(window.seed, metric.name, slug));
  const span = window.lastDay - window.firstDay;
  const start = random.next() < 0.4 ? window.firstDay : window.firstDay + Math.floor((random.next() * span) / 3);
  const nextValue = createModel(metric.sampleSeries, random);
  const points: SamplePoint[] = [];
  for (let day = start; day <= window.lastDay; day += 1) {
    const raw = nextValue(day);
    if (random.next() < MISSING_DAY_RATE) continue;
    const value = metric.valueKind === 'integer' ? Math.round(raw) : Number(raw.toPrecision(8));
    points.push({ day: fromEpochDay(day), value, extra: splitExtra(value, metric.extraFields, random) });
  }
  return points;
}

// Private

type Model = (day: number) => number;

function createModel(shape: SampleSeries, random: Random): Model {
  const { min, max } = shape;
  const volatility = shape.volatility ?? 0.03;
  switch (shape.model) {
    case 'walk': {
      // Geometric random walk kept inside [min, max] by reflecting at the edges.
      let value = logUniform(random, min, max);
      return () => {
        value *= Math.exp(volatility * random.normal());
        if (value < min || value > max) value = Math.min(max, Math.max(min, value));
        return value;
      };
    }
    case 'weekly': {
      // A slowly drifting level with quieter weekends and daily noise; never negative.
      let level = logUniform(random, min, max);
      return (day) => {
        level = Math.min(max, Math.max(min, level * Math.exp(0.02 * random.normal())));
        const rhythm = weekday(day) === 0 || weekday(day) === 6 ? 0.7 : 1;
        return Math.max(0, level * rhythm * Math.exp(0.15 * random.normal()));
      };
    }
    case 'band': {
      // Mean-reverting noise that stays within the range (percentages, ratios, yields).
      const mid = (min + max) / 2;
      let value = random.between(min, max);
      return () => {
        value += 0.1 * (mid - value) + volatility * (max - min) * 0.1 * random.normal();
        value = Math.min(max, Math.max(min, value));
        return value;
      };
    }
  }
}

function logUniform(random: Random, min: number, max: number): number {
  const lo = Math.log(Math.max(min, Number.EPSILON));
  return Math.exp(random.between(lo, Math.log(max)));
}

/** Splits an integer total into named integer parts that add up to it. */
function splitExtra(total: number, fields: readonly string[], random: Random): Record<string, number> | null {
  if (fields.length === 0) return null;
  const parts: Record<string, number> = {};
  let left = total;
  fields.forEach((field, i) => {
    const share = i === fields.length - 1 ? left : Math.floor(left * random.next());
    parts[field] = share;
    left -= share;
  });
  return parts;
}
