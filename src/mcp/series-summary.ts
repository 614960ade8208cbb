import { z } from 'zod';

/** A point of a REST series answer: its day, its value (null where a fill or a transform gives none), extra fields. */
export interface AnswerPoint {
  date: string;
  value: number | null;
}

/** The figures `get_series` gives per series before its points. */
export const SERIES_SUMMARY_SCHEMA = z.object({
  project: z.string(),
  points: z.int().describe('Points in the answer, null values included.'),
  from: z.string().nullable().describe('Day of the first point with a value.'),
  to: z.string().nullable().describe('Day of the last point with a value.'),
  first: z.number().nullable(),
  last: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  mean: z.number().nullable(),
  changePercent: z
    .number()
    .nullable()
    .describe('(last − first) / |first| × 100; null when first is 0 or there is no value.'),
});

export type SeriesSummary = z.infer<typeof SERIES_SUMMARY_SCHEMA>;

/** The summary of one series' points (values that are null are skipped, as a chart would). */
export function summarize(project: string, points: readonly AnswerPoint[]): SeriesSummary {
  let first: AnswerPoint | undefined;
  let last: AnswerPoint | undefined;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let count = 0;
  for (const point of points) {
    if (point.value === null) continue;
    first ??= point;
    last = point;
    min = Math.min(min, point.value);
    max = Math.max(max, point.value);
    sum += point.value;
    count += 1;
  }
  if (first === undefined || last === undefined)
    return { project, points: points.length, from: null, to: null, first: null, last: null, ...NO_FIGURES };
  const start = first.value!;
  return {
    project,
    points: points.length,
    from: first.date,
    to: last.date,
    first: start,
    last: last.value,
    min,
    max,
    mean: sum / count,
    changePercent: start === 0 ? null : ((last.value! - start) / Math.abs(start)) * 100,
  };
}

// Private

const NO_FIGURES = { min: null, max: null, mean: null, changePercent: null } as const;
