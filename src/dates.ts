import { clipped } from './clipped.js';

/**
 * Calendar dates as `YYYY-MM-DD` text and as whole days since 1970-01-01 (UTC). The
 * conversions are integer arithmetic on the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil / civil_from_days): every series request prices and sizes itself
 * with them, and Date objects would cost a measurable share of a request.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MS_PER_DAY = 86_400_000;

/** True only for a real calendar date written exactly as `YYYY-MM-DD` (2024-02-30 is false). */
export function isIsoDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date. */
export function toEpochDay(isoDate: string): number {
  return daysFromCivil(Number(isoDate.slice(0, 4)), Number(isoDate.slice(5, 7)), Number(isoDate.slice(8, 10)));
}

/** The `YYYY-MM-DD` date of a day since 1970-01-01. */
export function fromEpochDay(day: number): string {
  const [y, m, d] = civilFromDays(day);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** Today's date in UTC. */
export function todayEpochDay(now: Date = new Date()): number {
  return Math.floor(now.getTime() / MS_PER_DAY);
}

/** 0 for Sunday through 6 for Saturday. */
export function weekday(epochDay: number): number {
  return (((epochDay + 4) % 7) + 7) % 7;
}

/** Days since 1970-01-01 of a year, month (1–12) and day. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Year, month (1–12) and day of a day since 1970-01-01. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

// Private

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** RFC 3339: a date, `T` (or a space), a time with optional fraction, and a zone. */
const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 instant, or a date alone meaning the end of that UTC day (so every write of
 * that day counts), as canonical UTC text with microseconds, which PostgreSQL compares
 * write times with; undefined when `text` is neither, or names an instant outside the years
 * 0001 to 9999 in UTC. Digits finer than a microsecond
 * (PostgreSQL's resolution) are cut, never rounded up into the future.
 */
export function canonicalInstant(text: string): string | undefined {
  if (isIsoDate(text)) return `${text}T23:59:59.999999Z`;
  const m = RFC3339.exec(text);
  if (m === null || !isIsoDate(m[1]!) || Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 60) return undefined;
  // A leap second (23:59:60 UTC, which RFC 3339 allows) is read as the start of the next
  // second, as PostgreSQL reads :60; JavaScript's dates refuse it. Its fractions too (which
  // PostgreSQL refuses): clocks that count no leap seconds wrote nothing in between.
  const leap = m[4] === '60';
  const ms =
    Date.parse(
      `${m[1]}T${m[2]}:${m[3]}:${leap ? '59' : m[4]}${m[5] === undefined || leap ? '' : `.${m[5]}`}` +
        `${m[6]!.toUpperCase()}`,
    ) + (leap ? 1000 : 0);
  if (Number.isNaN(ms)) return undefined;
  const utc = new Date(ms).toISOString();
  // An offset can carry a day at either end of the calendar out of it (0001-01-01T00:00:00+01:00
  // is in year 0), which PostgreSQL refuses: such an instant is refused here, as a 400.
  if (!isIsoDate(utc.slice(0, 10))) return undefined;
  const microseconds = leap ? '000' : (m[5] ?? '').padEnd(6, '0').slice(3, 6);
  return `${utc.slice(0, -1)}${microseconds}Z`;
}

/**
 * The message for a value `canonicalInstant` refused; a date alone means the `start` (`since`) or
 * `end` (`as_of`) of its UTC day.
 */
export const INSTANT_EXPECTED = (text: string, dateMeans: 'start' | 'end' = 'end'): string =>
  `expected an RFC 3339 instant such as 2026-06-30T12:00:00Z (in UTC, within ` +
  `the years 0001-9999), or a date YYYY-MM-DD meaning the ${dateMeans} of ` +
  `that UTC day; got ${JSON.stringify(clipped(text))}` +
  (plusReadAsSpace(text) ? ' (a + in a URL query is read as a space: write it as %2B)' : '');

/**
 * An instant whose offset lost its `+` to a space (`2026-06-30T12:00:00 05:30`): what a
 * URL query makes of an offset written without encoding. Said in the refusal, since the
 * value echoed back otherwise looks like the one typed.
 */
function plusReadAsSpace(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)? \d{2}:\d{2}$/.test(text);
}
