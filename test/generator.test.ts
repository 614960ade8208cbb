import { describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { toEpochDay } from '../src/dates.js';
import { generateSeries } from '../src/seed/generate-series.js';

const WINDOW = { firstDay: toEpochDay('2023-07-01'), lastDay: toEpochDay('2026-06-30'), seed: 42 };
const metric = (name: string) => CATALOG.byName.get(name)!;

describe('the sample data generator', () => {
  it('gives the same series for the same seed and window', () => {
    for (const m of CATALOG.metrics) {
      expect(generateSeries(m, m.projects[0]!, WINDOW)).toEqual(generateSeries(m, m.projects[0]!, WINDOW));
    }
  });

  it('gives other values for another seed or another project', () => {
    const m = metric('token-price-usd');
    const base = generateSeries(m, 'ethereum', WINDOW).map((p) => p.value);
    expect(generateSeries(m, 'ethereum', { ...WINDOW, seed: 43 }).map((p) => p.value)).not.toEqual(base);
    expect(generateSeries(m, 'solana', WINDOW).map((p) => p.value)).not.toEqual(base);
  });

  it('writes ascending real dates inside the window, at most one per day, with a few gaps', () => {
    const points = generateSeries(metric('volume-usd'), 'binance', WINDOW);
    const days = points.map((p) => toEpochDay(p.day));
    expect(days.every((d, i) => i === 0 || d > days[i - 1]!)).toBe(true);
    expect(days[0]!).toBeGreaterThanOrEqual(WINDOW.firstDay);
    expect(days.at(-1)!).toBeLessThanOrEqual(WINDOW.lastDay);
    const all = CATALOG.metrics.flatMap((m) => m.projects.map((s) => generateSeries(m, s, WINDOW)));
    const gaps = all.reduce((n, s) => n + (toEpochDay(s.at(-1)!.day) - toEpochDay(s[0]!.day) + 1 - s.length), 0);
    expect(gaps).toBeGreaterThan(0);
    expect(gaps).toBeLessThan(all.reduce((n, s) => n + s.length, 0) * 0.02);
  });

  it('starts projects on different days so coverage differs', () => {
    const starts = new Set(
      metric('etf-aum-change-pct').projects.map((s) => generateSeries(metric('etf-aum-change-pct'), s, WINDOW)[0]!.day),
    );
    expect(starts.size).toBeGreaterThan(10);
  });

  it('keeps integer metrics whole and USD totals and counts non-negative', () => {
    for (const m of CATALOG.metrics) {
      for (const slug of m.projects.slice(0, 3)) {
        const values = generateSeries(m, slug, WINDOW).map((p) => p.value);
        if (m.valueKind === 'integer') expect(values.every(Number.isInteger), m.name).toBe(true);
        if (m.sampleSeries.model !== 'band')
          expect(
            values.every((v) => v >= 0),
            m.name,
          ).toBe(true);
        expect(values.every(Number.isFinite), m.name).toBe(true);
      }
    }
  });

  it('keeps bounded metrics such as percentages and APYs inside their range', () => {
    for (const name of ['etf-aum-change-pct', 'staking-apy', 'outstanding-mnav']) {
      const m = metric(name);
      const values = generateSeries(m, m.projects[0]!, WINDOW).map((p) => p.value);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(m.sampleSeries.min);
      expect(Math.max(...values)).toBeLessThanOrEqual(m.sampleSeries.max);
    }
  });

  it('makes USD volumes quieter on weekends than on weekdays', () => {
    const points = metric('volume-usd').projects.flatMap((s) => generateSeries(metric('volume-usd'), s, WINDOW));
    const mean = (weekend: boolean) => {
      const picked = points.filter((p) => [0, 6].includes(new Date(`${p.day}T00:00:00Z`).getUTCDay()) === weekend);
      return picked.reduce((n, p) => n + p.value, 0) / picked.length;
    };
    expect(mean(true)).toBeLessThan(mean(false) * 0.85);
  });

  it('splits etf-num-products into extra fields that add up to the value', () => {
    for (const p of generateSeries(metric('etf-num-products'), 'blackrock', WINDOW)) {
      const parts = Object.values(p.extra ?? {});
      expect(parts.reduce((a, b) => a + b, 0)).toBe(p.value);
    }
    expect(generateSeries(metric('price'), 'ethereum', WINDOW).every((p) => p.extra === null)).toBe(true);
  });
});
