import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/auth/api-keys.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { BROWSER_AVAILABLE, launchBrowser } from './support/browser.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * The chart explorer in a real browser, on both stores: what it draws (read from
 * window.explorer.series, not pixels) equals the REST answer, its URL reloads the same
 * view, its CSV equals /v1/export, failures (a wrong key, 429, 503, no network) are
 * messages on the page, and no page holds a key.
 */

const SCREENSHOT = (store: string) => `/tmp/explorer-${store}.png`;

interface Point {
  date: string;
  value: number | null;
}

interface View {
  start: string;
  end: string;
  /** The page's URL for token-price-usd of ethereum and solana over start..end. */
  path: string;
  /** The same range as REST parameters. */
  rest: string;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!BROWSER_AVAILABLE || !kind.available)(
    `the explorer in a headless browser on ${kind.name}`,
    { timeout: 90_000 },
    () => {
      let service: TestService;
      let browser: Browser;
      let page: Page;
      let view: View;

      beforeAll(async () => {
        [service, browser] = await Promise.all([startTestService(kind), launchBrowser()]);
        page = await browser.newPage({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
        view = await storedView(service);
      }, 90_000);
      afterAll(async () => {
        await browser?.close();
        await service?.stop();
      });

      it('serves the page and its assets without a key, holding none', async () => {
        for (const [path, type] of [
          ['/explore', /^text\/html/],
          ['/explore/explorer.js', /^text\/javascript/],
          ['/explore/explorer.css', /^text\/css/],
          ['/explore/uplot.js', /^text\/javascript/],
          ['/explore/uplot.css', /^text\/css/],
        ] as const) {
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

      it("draws the REST answer for the URL's view once the key is entered, and the URL reloads it", async () => {
        await page.goto(`${service.url}${view.path}`);
        await expect.poll(() => page.locator('#status').innerText()).toMatch(/Enter your API key/);
        await enterKey(page, TEST_KEY);
        await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
        const rest = (await (await service.get(`/v1/metrics/token-price-usd?${view.rest}`)).json()) as Record<
          string,
          Point[]
        >;
        const series = await drawn(page);
        expect(Object.keys(series)).toEqual(['ethereum', 'solana']);
        expect(series.ethereum!.length).toBe(series.solana!.length);
        expect(series.ethereum!.length).toBeGreaterThan(50);
        expect(series).toEqual(rest);
        expect(await page.locator('#chart .uplot').count()).toBe(1);
        expect(await page.locator('#chart .u-legend').innerText()).toContain('solana');
        expect(await page.locator('#log').isChecked()).toBe(true); // a price opens on a log scale
        // Hovering shows the day and each series' value in the legend.
        await page.locator('#chart .u-over').hover();
        const legend = await page.locator('#chart .u-legend').innerText();
        const day = /\d{4}-\d{2}-\d{2}/.exec(legend)?.[0];
        expect(day).toBeDefined();
        const hovered = rest.ethereum!.find((p) => p.date === day)!;
        expect(legend).toContain(String(hovered.value));
        await page.screenshot({ path: SCREENSHOT(kind.name), fullPage: true });

        // The table view shows the same values, a row per day.
        await page.locator('#table-view').check();
        expect(await page.locator('#table thead th').allInnerTexts()).toEqual(['date', 'ethereum', 'solana']);
        expect(await page.locator('#table tbody tr').count()).toBe(series.ethereum!.length);
        const lastRow = await page.locator('#table tbody tr').last().locator('td').allInnerTexts();
        expect(lastRow).toEqual([view.end, String(rest.ethereum!.at(-1)!.value), String(rest.solana!.at(-1)!.value)]);
        expect(new URL(page.url()).searchParams.get('view')).toBe('table');
        await page.locator('#table-view').uncheck();

        // Shape options and a linear scale go into the URL; a reload draws the same thing.
        await page.locator('#log').uncheck();
        await page.locator('#interval').selectOption('week');
        await page.locator('#controls button[type=submit]').click();
        await expect.poll(() => loads(page)).toBe(2);
        expect(new URL(page.url()).search).toBe(
          `?metric=token-price-usd&project=ethereum,solana&start_date=` +
            `${view.start}&end_date=${view.end}&interval=week&log=off`,
        );
        const weekly = await drawn(page);
        expect(weekly.ethereum![0]!.date).toBe(mondayOf(view.start)); // a week is labelled by its Monday
        await page.reload();
        await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1); // the key is still in this tab
        expect(await drawn(page)).toEqual(weekly);
        expect(await page.locator('#interval').inputValue()).toBe('week');
        expect(await page.locator('#log').isChecked()).toBe(false);
      });

      it('downloads a CSV equal to /v1/export and copies a curl without the key', async () => {
        const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-csv').click()]);
        const csv = await readFile((await download.path())!, 'utf8');
        const exported = await (
          await service.get(`/v1/export?metric=token-price-usd&${view.rest}&interval=week&format=csv`)
        ).text();
        expect(csv).toBe(exported);
        expect(csv.split('\n')[0]).toBe('metric,project,date,value');
        expect(download.suggestedFilename()).toBe(`token-price-usd_${view.start}_${view.end}.csv`);
        await page.locator('#copy-curl').click();
        const curl = await page.locator('#copied').innerText();
        expect(curl).toBe(
          `curl -H "x-api-key: $KEY" "${service.url}/v1/metrics/token-price-usd?${view.rest}&interval=week"`,
        );
        await page.locator('#copy-graphql').click();
        const graphql = await page.locator('#copied').innerText();
        expect(graphql).toContain('"interval": "WEEK"');
        expect(graphql).not.toContain(TEST_KEY);
      });

      it('draws the newest view when an older, slower answer lands after it', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(`${service.url}${view.path}`);
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        // The first request ("All", the long range) is held back until the second ("30 d") has been drawn.
        let requests = 0;
        let releaseFirst!: () => void;
        const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
        await fresh.route('**/graphql', async (route) => {
          if (++requests === 1) await firstHeld;
          await route.continue();
        });
        await fresh.locator('.presets button[data-days="all"]').click();
        await expect.poll(() => requests).toBe(1);
        await fresh.locator('.presets button[data-days="30"]').click();
        await expect.poll(() => loads(fresh)).toBe(2);
        releaseFirst();
        await fresh.waitForTimeout(1_000);
        const start = await fresh.locator('#start').inputValue();
        expect(start).toBe(addDays(view.end, -29));
        const series = await drawn(fresh);
        expect(series.ethereum!.map((p) => p.date)).toEqual(Array.from({ length: 30 }, (_, i) => addDays(start, i)));
        expect(new URL(fresh.url()).searchParams.get('start_date')).toBe(start);
        await fresh.close();
      });

      it(
        'makes the y axis wide enough for its labels: a market cap in the hundreds ' + 'of millions is not cut off',
        async () => {
          const fresh = await browser.newPage({ viewport: { width: 375, height: 800 } });
          await fresh.goto(`${service.url}/explore?metric=treasury-market-cap-usd&log=off`);
          await enterKey(fresh, TEST_KEY);
          await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
          const axis = await fresh.evaluate(() => {
            const plot = (
              window as unknown as {
                explorer: {
                  plot: {
                    axes: { _size: number; _values: string[]; gap: number; ticks: { size: number }; font: [string] }[];
                  };
                };
              }
            ).explorer.plot;
            const y = plot.axes[1]!;
            const context = document.createElement('canvas').getContext('2d')!;
            context.font = y.font[0];
            return {
              labels: y._values,
              widest: Math.max(...y._values.map((text) => context.measureText(text).width)),
              room: y._size - y.ticks.size - y.gap,
            };
          });
          expect(axis.labels.some((label) => label.length >= 11)).toBe(true); // e.g. 100,000,000
          expect(axis.widest).toBeLessThanOrEqual(axis.room);
          await fresh.close();
        },
      );

      it("labels the y axis with the metric's unit and shows its methodology beside the picker", async () => {
        const fresh = await browser.newPage({ viewport: { width: 1300, height: 900 } });
        await fresh.goto(`${service.url}/explore?metric=etf-flows-btc&project=bitcoin`);
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const label = await fresh.evaluate(
          () =>
            (window as unknown as { explorer: { plot: { axes: { label: string }[] } } }).explorer.plot.axes[1]!.label,
        );
        expect(label).toBe('BTC');
        const about = await fresh.textContent('#metric-about');
        expect(about).toContain(' in BTC');
        expect(about).toContain('Net creations minus redemptions');
        await fresh.close();
      });

      it('draws a view of one day as a dot on that day, not as nothing on an axis running years on', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(
          `${service.url}/explore?metric=token-price-usd&project=ethereum&start_date=` +
            `${view.end}&end_date=${view.end}&log=off`,
        );
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const drawnPlot = await fresh.evaluate(() => {
          const plot = (
            window as unknown as {
              explorer: {
                plot: {
                  scales: { x: { min: number; max: number } };
                  series: { points: { show: (u: unknown, i: number) => boolean } }[];
                };
              };
            }
          ).explorer.plot;
          return { min: plot.scales.x.min, max: plot.scales.x.max, dot: plot.series[1]!.points.show(plot, 1) };
        });
        const day = Date.parse(`${view.end}T00:00:00Z`) / 1000;
        expect(drawnPlot.min).toBeLessThan(day);
        expect(drawnPlot.max).toBeGreaterThan(day);
        expect(drawnPlot.max - drawnPlot.min).toBeLessThanOrEqual(3 * 86_400);
        expect(drawnPlot.dot).toBe(true);
        await fresh.close();
      });

      it(
        'keeps a control changed but not yet shown out of the URL when Log is ' +
          'toggled: a shared link is the view on screen',
        async () => {
          const fresh = await browser.newPage();
          await fresh.goto(
            `${service.url}/explore?metric=token-price-usd&project=ethereum&start_date=` +
              `${addDays(view.end, -20)}&end_date=${view.end}&log=off`,
          );
          await enterKey(fresh, TEST_KEY);
          await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
          await fresh.selectOption('#interval', 'month');
          await fresh.check('#log');
          const url = new URL(fresh.url());
          expect(url.searchParams.get('log')).toBe('on');
          expect(url.searchParams.get('interval') ?? 'day').toBe('day');
          await fresh.close();
        },
      );

      it('says once, and only while Log is on, that negative values are drawn on a linear scale', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(
          `${service.url}/explore?metric=etf-aum-change-pct&start_date=` +
            `${addDays(view.end, -89)}&end_date=${view.end}&log=on`,
        );
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const values = Object.values(await drawn(fresh))
          .flat()
          .map((p) => p.value);
        expect(values.some((v) => v !== null && v <= 0)).toBe(true);
        const note = 'Log scale needs positive values: drawn on a linear scale.';
        const notes = async () => (await fresh.locator('#status').innerText()).split(note).length - 1;
        await expect.poll(notes).toBe(1);
        for (let i = 0; i < 2; i++) {
          await fresh.locator('#log').uncheck();
          expect(await notes()).toBe(0);
          await fresh.locator('#log').check();
          expect(await notes()).toBe(1);
        }
        await fresh.locator('#table-view').check();
        await fresh.locator('#table-view').uncheck();
        expect(await notes()).toBe(1);
        await fresh.close();
      });

      it('says which values of a link it could not use, and what it shows instead', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(
          `${service.url}/explore?metric=token-price-usd&project=ethereum,nosuch&start_date=2024-13-01&end_date=` +
            `${view.end}&interval=fortnight&window=abc`,
        );
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const status = await fresh.locator('#status').innerText();
        expect(status).toContain('token-price-usd has no project "nosuch"; left out.');
        expect(status).toContain('The link\'s start_date "2024-13-01" is not a date (YYYY-MM-DD); left empty.');
        expect(status).toContain(
          'The link\'s interval "fortnight" is not one of week, month, quarter, year; left at the default.',
        );
        expect(status).toContain('The link\'s window "abc" is not a number of days; left empty.');
        expect(Object.keys(await drawn(fresh))).toEqual(['ethereum']);
        expect(await fresh.locator('#interval').inputValue()).toBe('');
        // Said once: the next view's status is its own.
        await fresh.locator('#controls button[type=submit]').click();
        await expect.poll(() => loads(fresh)).toBe(2);
        expect(await fresh.locator('#status').innerText()).not.toContain('nosuch');

        await fresh.goto(`${service.url}/explore?metric=no-such-metric`);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        expect(await fresh.locator('#status').innerText()).toContain(
          'The link\'s metric "no-such-metric" is not in the catalog; showing token-price-usd.',
        );
        expect(await fresh.locator('#metric').inputValue()).toBe('token-price-usd');
        await fresh.close();
      });

      it('says where the data lies when a range holds none, and draws no old chart after a failed load', async () => {
        const catalog = (await (await service.get('/v1/metrics')).json()) as {
          metrics: { name: string; projects: { slug: string; firstDate: string; lastDate: string }[] }[];
        };
        const ethereum = catalog.metrics
          .find((m) => m.name === 'token-price-usd')!
          .projects.find((p) => p.slug === 'ethereum')!;
        const fresh = await browser.newPage();
        await fresh.goto(
          `${service.url}/explore?metric=token-price-usd&project=ethereum&start_date=1990-01-01&end_date=1990-12-31`,
        );
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        expect(await fresh.locator('#status').innerText()).toContain(
          `No data in this range: the chosen projects have data from ${ethereum.firstDate} to ${ethereum.lastDate}.`,
        );

        await fresh.goto(`${service.url}${view.path}`);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        expect(await fresh.locator('#chart .uplot').count()).toBe(1);
        await fresh.route('**/graphql', (route) => route.abort('connectionrefused'));
        await fresh.locator('#interval').selectOption('month');
        await fresh.locator('#controls button[type=submit]').click();
        await expect.poll(() => fresh.locator('#status').getAttribute('class')).toBe('error');
        // The URL names the monthly view that failed; the daily chart before it is gone.
        expect(new URL(fresh.url()).searchParams.get('interval')).toBe('month');
        expect(await fresh.locator('#chart .uplot').count()).toBe(0);
        expect(await drawn(fresh)).toEqual({});
        await fresh.close();
      });

      it('goes back and forward through the views asked for, and draws each again', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(`${service.url}${view.path}`);
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const daily = await drawn(fresh);
        await fresh.locator('#interval').selectOption('week');
        await fresh.locator('#controls button[type=submit]').click();
        await expect.poll(() => loads(fresh)).toBe(2);
        const weekly = await drawn(fresh);
        expect(weekly.ethereum!.length).toBeLessThan(daily.ethereum!.length);
        await fresh.goBack();
        await expect.poll(() => loads(fresh)).toBe(3);
        expect(new URL(fresh.url()).pathname).toBe('/explore');
        expect(new URL(fresh.url()).searchParams.get('interval')).toBeNull();
        expect(await fresh.locator('#interval').inputValue()).toBe('');
        expect(await drawn(fresh)).toEqual(daily);
        await fresh.goForward();
        await expect.poll(() => loads(fresh)).toBe(4);
        expect(await fresh.locator('#interval').inputValue()).toBe('week');
        expect(await drawn(fresh)).toEqual(weekly);
        await fresh.close();
      });

      it('gives each of a dozen series a colour of its own', async () => {
        const catalog = (await (await service.get('/v1/metrics')).json()) as {
          metrics: { name: string; projects: { slug: string }[] }[];
        };
        const slugs = catalog.metrics
          .find((m) => m.name === 'etf-aum-change-pct')!
          .projects.slice(0, 12)
          .map((p) => p.slug);
        const fresh = await browser.newPage({ viewport: { width: 1300, height: 900 } });
        await fresh.goto(`${service.url}/explore?metric=etf-aum-change-pct&project=${slugs.join(',')}`);
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        expect(Object.keys(await drawn(fresh))).toHaveLength(12);
        const colours = await fresh.evaluate(() =>
          [...document.querySelectorAll('#chart .u-legend .u-series .u-marker')]
            .slice(1)
            .map((m) => getComputedStyle(m).borderTopColor),
        );
        expect(colours).toHaveLength(12); // the first marker is the date's
        expect(new Set(colours).size).toBe(12);
        await fresh.close();
      });

      it(
        "shows a metric's breakdown in the table: a column per extra field after " +
          "each project's value, as REST serves them",
        async () => {
          const catalog = (await (await service.get('/v1/metrics')).json()) as {
            metrics: { name: string; projects: { slug: string; lastDate: string }[] }[];
          };
          const [a, b] = catalog.metrics.find((m) => m.name === 'etf-num-products')!.projects.filter((p) => p.lastDate);
          const end = [a!.lastDate, b!.lastDate].sort()[0]!;
          const start = addDays(end, -9);
          const fresh = await browser.newPage();
          await fresh.goto(
            `${service.url}/explore?metric=etf-num-products&project=` +
              `${a!.slug},${b!.slug}&start_date=${start}&end_date=` +
              `${end}&view=table`,
          );
          await enterKey(fresh, TEST_KEY);
          await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
          const fields = ['spot', 'futures', 'leveraged'];
          expect(await fresh.locator('#table thead th').allInnerTexts()).toEqual([
            'date',
            ...[a!.slug, b!.slug].flatMap((slug) => [slug, ...fields.map((f) => `${slug} ${f}`)]),
          ]);
          const rest = (await (
            await service.get(
              `/v1/metrics/etf-num-products?project=${a!.slug},${b!.slug}&start_date=${start}&end_date=${end}`,
            )
          ).json()) as Record<string, Record<string, unknown>[]>;
          const restRows = [...new Set(Object.values(rest).flatMap((points) => points.map((p) => p.date as string)))]
            .sort()
            .map((date) => [
              date,
              ...[a!.slug, b!.slug].flatMap((slug) => {
                const point = rest[slug]!.find((p) => p.date === date);
                return ['value', ...fields].map((f) => (point?.[f] == null ? '' : String(point[f])));
              }),
            ]);
          expect(restRows.length).toBeGreaterThan(0);
          expect(restRows.some((row) => row.slice(2).some((cell) => cell !== ''))).toBe(true);
          const shownRows = await fresh
            .locator('#table tbody tr')
            .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)));
          expect(shownRows).toEqual(restRows);
          // Its CSV keeps the breakdown, as the export does when asked, so it imports back whole.
          const [download] = await Promise.all([
            fresh.waitForEvent('download'),
            fresh.locator('#download-csv').click(),
          ]);
          const csv = await readFile((await download.path())!, 'utf8');
          const exported = await (
            await service.get(
              `/v1/export?metric=etf-num-products&project=${a!.slug}` +
                `,${b!.slug}&start_date=${start}&end_date=${end}&format=csv&extra=include`,
            )
          ).text();
          expect(csv.split('\n')[0]).toBe('metric,project,date,value,extra_json');
          expect(csv).toMatch(/"\{""spot"":/);
          expect(csv).toBe(exported);
          await fresh.close();
        },
      );

      it('shows a readable message for a wrong key and asks for it again', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(`${service.url}${view.path}`);
        await enterKey(fresh, 'not-a-key');
        await expect
          .poll(() => fresh.locator('#status').innerText(), { timeout: 10_000 })
          .toMatch(/The API key was not accepted \(401\)/);
        expect(await fresh.locator('#status').getAttribute('class')).toBe('error');
        expect(await fresh.evaluate(() => sessionStorage.length)).toBe(0); // a reload asks again
        expect(await fresh.evaluate(() => document.activeElement?.id)).toBe('key');
        await fresh.close();
      });

      it('tells a key over its rate limit how many seconds to wait', async () => {
        // One unit a minute with a bucket of one: the catalog spends it, the series is refused.
        const limited = 'explorer-limited-0123456789abcdef';
        await insertApiKey(service.running.services.store, 'explorer-limited', hashApiKey(limited), {
          ratePerMinute: 1,
          burst: 1,
        });
        const fresh = await browser.newPage();
        await fresh.goto(`${service.url}${view.path}`);
        await enterKey(fresh, limited);
        await expect
          .poll(() => fresh.locator('#status').innerText(), { timeout: 10_000 })
          .toMatch(/Too many requests for this key \(429\): try again in \d+ seconds?\./);
        const seconds = Number(/in (\d+) seconds/.exec(await fresh.locator('#status').innerText())![1]);
        expect(seconds).toBeGreaterThanOrEqual(1);
        expect(seconds).toBeLessThanOrEqual(60);
        await fresh.close();
      });

      it('says when the service is unavailable or unreachable, and draws again once it is back', async () => {
        const fresh = await browser.newPage();
        await fresh.goto(`${service.url}${view.path}`);
        await enterKey(fresh, TEST_KEY);
        await expect.poll(() => loads(fresh), { timeout: 20_000 }).toBe(1);
        const show = () => fresh.locator('#controls button[type=submit]').click();

        // The service's own 503: its database is away (as while reconnecting).
        const state = service.running.services.state;
        const directory = state.directory;
        state.directory = undefined;
        try {
          await show();
          await expect
            .poll(() => fresh.locator('#status').innerText())
            .toMatch(/not ready .*\(503\); try again in 5 seconds/);
        } finally {
          state.directory = directory;
        }

        await fresh.route('**/graphql', (route) => route.abort('connectionrefused'));
        await show();
        await expect.poll(() => fresh.locator('#status').innerText()).toMatch(/The service cannot be reached/);
        expect(await fresh.locator('#status').getAttribute('class')).toBe('error');
        await fresh.unroute('**/graphql');

        // Download CSV says the same, not "Something went wrong: Failed to fetch".
        await fresh.route('**/v1/export?**', (route) => route.abort('connectionrefused'));
        await fresh.locator('#download-csv').click();
        await expect
          .poll(() => fresh.locator('#status').innerText())
          .toMatch(/^The service cannot be reached \(.+\)\. Check that it is running, then try again\.$/);
        expect(await fresh.locator('#status').getAttribute('class')).toBe('error');
        await fresh.unroute('**/v1/export?**');

        await show();
        await expect.poll(() => loads(fresh)).toBe(2);
        expect(await fresh.locator('#status').getAttribute('class')).toBe('');
        expect(await fresh.locator('#chart .uplot').count()).toBe(1);
        await fresh.close();
      });
    },
  );
}

describe.skipIf(!BROWSER_AVAILABLE)('the explorer beside GraphiQL settings', { timeout: 90_000 }, () => {
  it('draws with GRAPHIQL=off: it needs only the API', async () => {
    const [service, browser] = await Promise.all([
      startTestService(STORE_KINDS[0]!, { GRAPHIQL: 'off' }),
      launchBrowser(),
    ]);
    try {
      const graphiql = await service.get('/graphql', { key: null, headers: { accept: 'text/html' } });
      expect(graphiql.headers.get('content-type') ?? '').not.toMatch(/^text\/html/);
      expect(await graphiql.text()).not.toContain('GraphiQL');
      const view = await storedView(service);
      const page = await browser.newPage();
      await page.goto(`${service.url}${view.path}`);
      await enterKey(page, TEST_KEY);
      await expect.poll(() => loads(page), { timeout: 20_000 }).toBe(1);
      expect(Object.keys(await drawn(page))).toEqual(['ethereum', 'solana']);
    } finally {
      await browser.close();
      await service.stop();
    }
  });
});

describe('the explorer turned off', () => {
  it('is a 404 problem with EXPLORER=off, even with GraphiQL on', async () => {
    const service = await startTestService(STORE_KINDS[0]!, { EXPLORER: 'off' });
    try {
      for (const path of ['/explore', '/explore/explorer.js', '/explore/uplot.js']) {
        const res = await service.get(path, { key: null });
        expect(res.status, path).toBe(404);
        expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
      }
    } finally {
      await service.stop();
    }
  });
});

// Private

/**
 * Sixty stored days that ethereum and solana both have, read from the REST catalog (not
 * today's date): they end on the earlier of their last days.
 */
async function storedView(service: TestService): Promise<View> {
  const catalog = (await (await service.get('/v1/metrics')).json()) as {
    metrics: { name: string; projects: { slug: string; firstDate: string; lastDate: string }[] }[];
  };
  const chosen = catalog.metrics
    .find((m) => m.name === 'token-price-usd')!
    .projects.filter((p) => p.slug === 'ethereum' || p.slug === 'solana');
  expect(chosen.map((p) => p.slug)).toEqual(['ethereum', 'solana']);
  const end = chosen.map((p) => p.lastDate).sort()[0]!;
  const firstShared = chosen
    .map((p) => p.firstDate)
    .sort()
    .at(-1)!;
  const sixtyDays = addDays(end, -59);
  const start = sixtyDays < firstShared ? firstShared : sixtyDays;
  const rest = `project=ethereum,solana&start_date=${start}&end_date=${end}`;
  return { start, end, rest, path: `/explore?metric=token-price-usd&${rest}` };
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The Monday of an ISO week holding `date`. */
function mondayOf(date: string): string {
  const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return addDays(date, -weekday);
}

async function enterKey(page: Page, key: string): Promise<void> {
  await page.locator('#key').fill(key);
  await page.locator('#key').press('Enter');
}

function drawn(page: Page): Promise<Record<string, Point[]>> {
  return page.evaluate(() => (window as unknown as { explorer: { series: Record<string, Point[]> } }).explorer.series);
}

function loads(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { explorer: { loads: number } }).explorer.loads);
}
