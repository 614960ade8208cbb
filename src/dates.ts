/** Calendar dates as `YYYY-MM-DD` text and as whole days since 1970-01-01 (UTC). */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MS_PER_DAY = 86_400_000;

/** True only for a real calendar date written exactly as `YYYY-MM-DD` (2024-02-30 is false). */
export function isIsoDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day && year >= 1;
}

export function toEpochDay(isoDate: string): number {
  return Math.floor(Date.parse(`${isoDate}T00:00:00Z`) / MS_PER_DAY);
}

export function fromEpochDay(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** Today's date in UTC. */
export function todayEpochDay(now: Date = new Date()): number {
  return Math.floor(now.getTime() / MS_PER_DAY);
}

/** 0 for Sunday through 6 for Saturday. */
export function weekday(epochDay: number): number {
  return (epochDay + 4) % 7;
}
