import { describe, expect, it } from 'vitest';
import { canonicalInstant, fromEpochDay, isIsoDate, toEpochDay, weekday } from '../src/dates.js';

describe('calendar dates', () => {
  it("converts every day from year 1 to 9999 as JavaScript's own Date does", () => {
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
    expect(
      [
        '2023-02-29',
        '1900-02-29',
        '2024-02-30',
        '2024-04-31',
        '2024-13-01',
        '2024-00-10',
        '0000-01-01',
        '2024-1-05',
        '20240105',
        '2024-01-05T00:00:00Z',
      ].some(isIsoDate),
    ).toBe(false);
  });
});

describe('instants', () => {
  it(
    'reads a leap second (23:59:60, RFC 3339 allows it) as the start of the ' +
      'next second, as PostgreSQL reads :60, fractions too, and nothing past ' +
      ':60',
    () => {
      // psql: select '2016-12-31T23:59:60Z'::timestamptz gives 2017-01-01 00:00:00+00.
      expect(canonicalInstant('2016-12-31T23:59:60Z')).toBe('2017-01-01T00:00:00.000000Z');
      expect(canonicalInstant('2016-12-31t23:59:60.25z')).toBe('2017-01-01T00:00:00.000000Z');
      expect(canonicalInstant('2017-01-01 00:59:60+01:00')).toBe('2017-01-01T00:00:00.000000Z');
      expect(canonicalInstant('2016-12-31T23:59:59.999999Z')).toBe('2016-12-31T23:59:59.999999Z');
      expect(canonicalInstant('2016-12-31T23:59:61Z')).toBeUndefined();
      expect(canonicalInstant('9999-12-31T23:59:60Z')).toBeUndefined();
    },
  );
});
