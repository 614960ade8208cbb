import { describe, expect, it } from 'vitest';
import { fromEpochDay, isIsoDate, toEpochDay, weekday } from '../src/dates.js';

describe('calendar dates', () => {
  it('converts every day from year 1 to 9999 as JavaScript\'s own Date does', () => {
    const first = Date.UTC(1, 0, 1) / 86_400_000;
    for (let day = first; day < Date.UTC(9999, 11, 31) / 86_400_000; day += 37) {
      const iso = new Date(day * 86_400_000).toISOString().slice(0, 10);
      expect(fromEpochDay(day)).toBe(iso);
      expect(toEpochDay(iso)).toBe(day);
      expect(weekday(day)).toBe(new Date(day * 86_400_000).getUTCDay());
    }
  });

  it('accepts real dates only, leap days where they exist', () => {
    expect(['2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31'].every(isIsoDate)).toBe(true);
    expect(['2023-02-29', '1900-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-00-10', '0000-01-01', '2024-1-05', '20240105', '2024-01-05T00:00:00Z'].some(isIsoDate)).toBe(false);
  });
});
