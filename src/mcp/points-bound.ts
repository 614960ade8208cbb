import { toEpochDay } from '../dates.js';
import type { StoredSpans } from '../limits/stored-spans.js';
import { bucketStart, shiftBucket } from '../series/series-options.js';
import type { SeriesRequest } from '../series/series-request.js';

/**
 * At most how many points a request's answer can hold, counted up to `cap` + 1: per series
 * the buckets of the range clipped to its stored days (fills never reach outside them, and
 * transforms add no point). A series whose stored days are not known (yet) counts nothing;
 * the answer itself is counted too.
 */
export function mostPoints(request: SeriesRequest, spans: StoredSpans, cap: number): number {
  const { interval } = request.options;
  let total = 0;
  for (const slug of request.slugs) {
    const stored = spans.of(request.metric.name, slug);
    if (stored === undefined) continue;
    const first = Math.max(request.from === null ? stored.first : toEpochDay(request.from), stored.first);
    const last = bucketStart(
      Math.min(request.to === null ? stored.last : toEpochDay(request.to), stored.last),
      interval,
    );
    for (
      let bucket = bucketStart(first, interval);
      bucket <= last && total <= cap;
      bucket = shiftBucket(bucket, interval, 1)
    )
      total += 1;
    if (total > cap) break;
  }
  return total;
}
