/**
 * Which of a day's values a series read takes from its revision history: `latest` the one
 * served now (or as of `asOf`), `first_release` the first ever written for the day, and
 * `known_after` the one that stood at the end of UTC day D + `lagDays` (before 00:00 UTC
 * of D + lagDays + 1), absent when none had been written by then. With `asOf`, nothing
 * written after that instant counts. Buckets, fill and transforms then apply to the values
 * chosen (src/series/series-sql.ts, `pointSource`).
 */
export const VINTAGES = ['latest', 'first_release', 'known_after'] as const;

export type Vintage = (typeof VINTAGES)[number];

/** The largest `lagDays`: ten years of days. */
export const MAX_LAG_DAYS = 3650;
