import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_AVAILABLE, launchBrowser } from './support/browser.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The chart explorer in a real browser, on both stores: what it draws (read from
 * window.explorer.series, not pixels) equals the REST answer, its URL reloads the same
 * view, its CSV equals /v1/export, a wrong key shows a message, and no page holds a key.
 */

const START = '2026-05-01';
const VIEW = `/explore?metric=token-price-usd&project=ethereum,solana&start_date=${START}&end_date=${TEST_LAST_DAY}`;

interface Point {
  date: string;
  value: number | null;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!BROWSER_AVAILABLE || !kind.available)(`the explorer in a headless browser on ${kind.name}`, { timeout: 90_000 }, () => {
    let service: TestService;
    let browser: Browser;
    let page: Page;

    const drawn = (p: Page) => p.evaluate(() => (window as unknown as { explorer: { series: Record<string, Point[]> } }).explorer.series);
    const loads = (p: Page) => p.evaluate(() => (window as unknown as { explorer: { loads: number } }).explorer.loads);
    const enterKey = async (p: Page, key: string) => {
      await p.locator('#key').fill(key);
      await p.locator('#key').press('Enter');
    };

    beforeAll(async () => {
      [service, browser] = await Promise.all([startTestService(kind), launchBrowser()]);
      page = await browser.newPage({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
    }, 90_000);
    afterAll(async () => {
      await browser?.close();
      await service?.stop();
    });

    it('serves the page and its assets without a key, holding none', async () => {
      for (const [path, type] of [['/explore', /^text\/html/], ['/explore/explorer.js', /^text\/javascript/], ['/explore/uplot.js', /^text\/javascript/], ['/explore/uplot.css', /^text\/css/]] as const) {
        const res = await service.get(path, { key: null });
        expect(res.status, path).toBe(200);
        expect(res.headers.get('content-type'), path).toMatch(type);
        const text = await res.text();
        expect(text).not.toContain(TEST_KEY);
        expect(text).not.toMatch(/mk_[A-Za-z0-9_-]{20,}/);
      }
      const html = await (await service.get('/explore', { key: null })).text();
      expect(html).toMatch(/<form id="key-form"[^>]*>[\s\S]*<input id="key" name="key" type="password"/);
      expect((await service.get('/explore/nothing.js', { key: null })).status).toBe(404);
    });

    it('draws the REST answer for the URL\'s view once the key is entered, and the URL reloads it', async () => {
      await page.goto(`${service.url}${VIEW}`);
      await expect.poll(() => page.locator('#status').innerText()).toMatch(/Enter your API key/);
      await enterKey(page, TEST_KEY);
      await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
      const rest = (await (await service.get(`/v1/metrics/token-price-usd?project=ethereum,solana&start_date=${START}&end_date=${TEST_LAST_DAY}`)).json()) as Record<string, Point[]>;
      const series = await drawn(page);
      expect(Object.keys(series)).toEqual(['ethereum', 'solana']);
      expect(series.ethereum!.length).toBe(series.solana!.length);
      expect(series.ethereum!.length).toBeGreaterThan(50);
      expect(series).toEqual(rest);
      expect(await page.locator('#chart .uplot').count()).toBe(1);
      expect(await page.locator('#chart .u-legend').innerText()).toContain('solana');
      await page.screenshot({ path: `/tmp/explorer-${kind.name}.png`, fullPage: true });

      // The table view shows the same values, a row per day.
      await page.locator('#table-view').check();
      expect(await page.locator('#table thead th').allInnerTexts()).toEqual(['date', 'ethereum', 'solana']);
      expect(await page.locator('#table tbody tr').count()).toBe(series.ethereum!.length);
      const lastRow = await page.locator('#table tbody tr').last().locator('td').allInnerTexts();
      expect(lastRow).toEqual([TEST_LAST_DAY, String(rest.ethereum!.at(-1)!.value), String(rest.solana!.at(-1)!.value)]);
      expect(new URL(page.url()).searchParams.get('view')).toBe('table');
      await page.locator('#table-view').uncheck();

      // Shape options go into the URL; a reload draws the same thing.
      await page.locator('#interval').selectOption('week');
      await page.locator('#controls button[type=submit]').click();
      await expect.poll(() => loads(page)).toBe(2);
      expect(new URL(page.url()).search).toBe(`?metric=token-price-usd&project=ethereum,solana&start_date=${START}&end_date=${TEST_LAST_DAY}&interval=week&log=on`);
      const weekly = await drawn(page);
      expect(weekly.ethereum![0]!.date).toBe('2026-04-27'); // a Monday: the week holding May 1
      await page.reload();
      await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1); // the key is still in this tab
      expect(await drawn(page)).toEqual(weekly);
      expect(await page.locator('#interval').inputValue()).toBe('week');
    });

    it('downloads a CSV equal to /v1/export and copies a curl without the key', async () => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-csv').click()]);
      const csv = await readFile((await download.path())!, 'utf8');
      const exported = await (await service.get(`/v1/export?metric=token-price-usd&project=ethereum,solana&start_date=${START}&end_date=${TEST_LAST_DAY}&interval=week&format=csv`)).text();
      expect(csv).toBe(exported);
      expect(csv.split('\n')[0]).toBe('metric,project,date,value');
      await page.locator('#copy-curl').click();
      const curl = await page.locator('#copied').innerText();
      expect(curl).toBe(`curl -H "x-api-key: $KEY" "${service.url}/v1/metrics/token-price-usd?project=ethereum,solana&start_date=${START}&end_date=${TEST_LAST_DAY}&interval=week"`);
      await page.locator('#copy-graphql').click();
      expect(await page.locator('#copied').innerText()).toContain('"interval": "WEEK"');
    });

    it('shows a readable message for a wrong key', async () => {
      const fresh = await browser.newPage();
      await fresh.goto(`${service.url}${VIEW}`);
      await enterKey(fresh, 'not-a-key');
      await expect.poll(() => fresh.locator('#status').innerText(), { timeout: 10_000 }).toMatch(/The API key was not accepted \(401\)/);
      expect(await fresh.locator('#status').getAttribute('class')).toBe('error');
      await fresh.close();
    });
  });
}

describe('the explorer turned off', () => {
  it('is a 404 with EXPLORER=off, even with GraphiQL on', async () => {
    const service = await startTestService(STORE_KINDS[0]!, { EXPLORER: 'off' });
    try {
      const res = await service.get('/explore', { key: null });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    } finally {
      await service.stop();
    }
  });
});
