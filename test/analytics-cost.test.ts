import { describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { toEpochDay } from '../src/dates.js';
import type { StoredSpans } from '../src/limits/stored-spans.js';
import { prepareRank, rankCost } from '../src/rest/rank-route.js';
import { prepareTotal, totalCost } from '../src/rest/totals-route.js';

/** Prices known before anything is read, from the request and the series' stored days alone (figures by hand). */
const services = (spans: Record<string, [string, string]> = {}) => ({
  catalog: CATALOG,
  clock: () => new Date('2026-06-30T12:00:00Z'),
  storedSpans: {
    of: (_metric: string, slug: string) => {
      const span = spans[slug];
      return span === undefined ? undefined : { first: toEpochDay(span[0]), last: toEpochDay(span[1]) };
    },
  } as unknown as StoredSpans,
});

describe('what totals and rankings cost, before reading', () => {
  it("prices a total as its members' series: 6 venues x 181 days is ceil(6 x 181 / 365) = 3 units", () => {
    const s = services();
    const request = prepareTotal(s, 'volume-usd', 'group=major-cex&start_date=2026-01-01&end_date=2026-06-30');
    expect(request.series.slugs).toHaveLength(6);
    expect(totalCost(s, request)).toBe(3);
    // Monthly over ten years: 120 buckets and 3,652 days per member, so the days read count: ceil(6 x 3652 / 3650).
    const monthly = prepareTotal(s, 'volume-usd', 'group=major-cex&interval=month&start_date=2016-07-01');
    expect(totalCost(s, monthly)).toBe(7);
  });

  it('prices a total by what a member holds beyond the assumed ten years', () => {
    const s = services({ binance: ['1990-06-30', '2026-06-30'] });
    const request = prepareTotal(s, 'volume-usd', 'project=binance&interval=year');
    // 36 years of days read (13,150 days): 13150 / 3650 = 3.6 units, against 10 assumed.
    expect(totalCost(s, request)).toBe(4);
  });

  it('prices a ranking by the days its windows read: 76 issuers x 730 days / 3650 = 15.2, so 16', () => {
    const s = services();
    const byValue = prepareRank(s, 'etf-aum-change-pct', 'start_date=2025-07-01&end_date=2026-06-30');
    expect(byValue.series.slugs).toHaveLength(76);
    expect(rankCost(s, byValue)).toBe(16);
    // By change it reads a third window: 76 x 1095 / 3650 = 22.8, so 23.
    const byChange = prepareRank(s, 'etf-aum-change-pct', 'start_date=2025-07-01&end_date=2026-06-30&by=change');
    expect(rankCost(s, byChange)).toBe(23);
  });
});
