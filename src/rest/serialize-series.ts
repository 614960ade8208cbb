import type { DataPoint } from '../api/series-loader.js';

/**
 * The REST body: one key per slug in request order, each an array of points with
 * `date`, `value` and then any extra fields. Written as text so that key order is the
 * request order even for slugs that look like numbers.
 */
export function serializeSeries(slugs: readonly string[], series: readonly DataPoint[][]): string {
  const parts = slugs.map((slug, i) => `${JSON.stringify(slug)}:${serializePoints(series[i] ?? [])}`);
  return `{${parts.join(',')}}`;
}

// Private

function serializePoints(points: readonly DataPoint[]): string {
  return JSON.stringify(points.map(toRestPoint));
}

function toRestPoint(point: DataPoint): Record<string, unknown> {
  if (point.extra === null) return { date: point.date, value: point.value };
  const { date: _date, value: _value, ...extra } = point.extra;
  return { date: point.date, value: point.value, ...extra };
}
