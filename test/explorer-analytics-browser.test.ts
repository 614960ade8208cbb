import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnalyticsFixture, type AnalyticsFixture } from './support/analytics-fixture.js';
import { BROWSER_AVAILABLE, launchBrowser } from './support/browser.js';
import { TEST_KEY } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The explorer's Total and Rank views in a real browser: what they show (read from
 * window.explorer and the page, not pixels) equals the REST answers, buckets missing a
 * project are marked with the names on hover, and the view is kept in the URL.
 */

interface TotalPoint {
  date: string;
  value: number | null;
  contributors: number;
  missing: string[];
}

/** In catalog order, as the explorer's project list writes them. */
const PROJECTS = 'binance,coinbase,kraken,okx';

for (const kind of STORE_KINDS) {
  describe.skipIf(!BROWSER_AVAILABLE || !kind.available)(
    `the explorer's total and rank views on ${kind.name}`,
    { timeout: 90_000 },
    () => {
      let fx: AnalyticsFixture;
      let browser: Browser;
      let page: Page;

      beforeAll(async () => {
        [fx, browser] = await Promise.all([startAnalyticsFixture(kind), launchBrowser()]);
        page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
      }, 120_000);
      afterAll(async () => {
        await browser?.close();
        await fx?.stop();
      });

      it('draws the total of the URL, marks buckets that miss a project and names them on hover', async () => {
        const path = `/explore?metric=volume-usd&project=${PROJECTS}&start_date=2026-06-05&end_date=2026-06-30&mode=total`;
        await page.goto(`${fx.svc.url}${path}`);
        await page.locator('#key').fill(TEST_KEY);
        await page.locator('#key').press('Enter');
        await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
        const rest = (await (
          await fx.svc.get(`/v1/totals/volume-usd?project=${PROJECTS}&start_date=2026-06-05&end_date=2026-06-30`)
        ).json()) as { points: TotalPoint[] };
        const shown = await page.evaluate(
          () => (window as unknown as { explorer: { total: { points: TotalPoint[] } } }).explorer.total.points,
        );
        expect(shown).toEqual(rest.points);
        expect(shown.find((p) => p.date === '2026-06-11')!.missing).toEqual(['binance', 'okx']);
        const incomplete = rest.points.filter((p) => p.missing.length > 0).length;
        expect(incomplete).toBeGreaterThan(1);
        expect(await page.locator('#status').innerText()).toContain(`${incomplete} miss a project`);
        expect(await page.locator('#chart .u-legend').innerText()).toContain('missing');
        // Hover over 11 June: the legend names the missing projects.
        const xOf = await page.evaluate(() => {
          const u = (window as unknown as { explorer: { plot: { valToPos(v: number, s: string): number } } }).explorer
            .plot;
          return u.valToPos(Date.parse('2026-06-11T00:00:00Z') / 1000, 'x');
        });
        const over = page.locator('#chart .u-over');
        await over.hover({ position: { x: xOf, y: 50 } });
        await expect.poll(() => page.locator('#chart .u-legend').innerText()).toContain('binance, okx');
        // The table view lists contributors and missing names per bucket.
        await page.locator('#table-view').check();
        expect(await page.locator('#table thead th').allInnerTexts()).toEqual([
          'date',
          'sum',
          'contributors',
          'missing',
        ]);
        const row = page.locator('#table tbody tr', { hasText: '2026-06-11' });
        expect(await row.locator('td').allInnerTexts()).toEqual([
          '2026-06-11',
          String(rest.points.find((p) => p.date === '2026-06-11')!.value),
          '2',
          'binance, okx',
        ]);
        await page.locator('#table-view').uncheck();
        // Another op goes into the URL, and a reload shows the same view.
        await page.locator('#op').selectOption('median');
        await page.locator('#controls button[type=submit]').click();
        await expect.poll(() => loads(page)).toBe(2);
        expect(new URL(page.url()).searchParams.get('op')).toBe('median');
        expect(new URL(page.url()).searchParams.get('mode')).toBe('total');
        await page.reload();
        await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
        expect(await page.locator('#op').inputValue()).toBe('median');
        const median = (await (
          await fx.svc.get(
            `/v1/totals/volume-usd?project=${PROJECTS}&start_date=2026-06-05&end_date=2026-06-30&op=median`,
          )
        ).json()) as { points: TotalPoint[] };
        expect(
          await page.evaluate(
            () => (window as unknown as { explorer: { total: { points: TotalPoint[] } } }).explorer.total.points,
          ),
        ).toEqual(median.points);
        await page.locator('#copy-curl').click();
        expect(await page.locator('#copied').innerText()).toBe(
          `curl -H "x-api-key: $KEY" "${fx.svc.url}/v1/totals/volume-usd?project=${PROJECTS}` +
            `&start_date=2026-06-05&end_date=2026-06-30&op=median"`,
        );
      });

      it('shows a ranking with previous rank and change, kept in the URL', async () => {
        const path = `/explore?metric=volume-usd&project=${PROJECTS}&start_date=2026-06-26&end_date=2026-06-30&mode=rank&by=change`;
        await page.goto(`${fx.svc.url}${path}`);
        await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
        const rest = (await (
          await fx.svc.get(
            `/v1/rank/volume-usd?project=${PROJECTS}&start_date=2026-06-26&end_date=2026-06-30&by=change&top=1000`,
          )
        ).json()) as { rows: Record<string, number | string | null>[]; unranked: string[] };
        expect(rest.unranked).toEqual(['kraken']);
        const cells = await page
          .locator('#ranking tbody tr')
          .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
        expect(cells).toEqual(
          rest.rows.map((r) =>
            [
              r.rank,
              r.slug,
              r.value,
              r.previous_rank,
              r.previous_value,
              r.change,
              r.change_percent,
              r.share_of_total,
            ].map((v) => (v === null ? '' : String(v))),
          ),
        );
        expect(await page.locator('#table').innerText()).toContain('No data in the range: kraken.');
        expect(await page.locator('#chart').isHidden()).toBe(true);
        expect(await page.locator('#by').inputValue()).toBe('change');
        // Ranking by value instead: a new view in the URL.
        await page.locator('#by').selectOption('');
        await page.locator('#controls button[type=submit]').click();
        await expect.poll(() => loads(page)).toBe(2);
        expect(new URL(page.url()).searchParams.get('by')).toBeNull();
        expect(new URL(page.url()).searchParams.get('mode')).toBe('rank');
        await page.goBack();
        await expect.poll(() => page.locator('#by').inputValue()).toBe('change');
      });
    },
  );
}

function loads(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { explorer: { loads: number } }).explorer.loads);
}
