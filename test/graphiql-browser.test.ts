import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exampleQuery } from '../src/graphql/example-query.js';
import { BROWSER_AVAILABLE, editorText, launchBrowser } from './support/browser.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const SCREENSHOT = '/tmp/graphiql.png';

const pglite = STORE_KINDS.find((k) => k.name === 'pglite')!;

describe.skipIf(!BROWSER_AVAILABLE)('GraphiQL in a headless browser', { timeout: 60_000 }, () => {
  let service: TestService;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [service, browser] = await Promise.all([startTestService(pglite), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it(
    'loads without a key and holds none, runs the example once the user types ' +
      'a key, and keeps that key in the browser only',
    async () => {
      const landing = await page.goto(`${service.url}/graphql`);
      expect(landing?.status()).toBe(200);
      expect(landing?.headers()['content-type']).toMatch(/^text\/html/);
      const html = (await landing?.text()) ?? '';
      expect(html).not.toContain(TEST_KEY);
      expect(html).not.toMatch(/mk_[A-Za-z0-9_-]{20,}/);

      const example = service.running.services.state.example!;
      const queryEditor = page.locator('.graphiql-query-editor').first();
      await queryEditor.locator('.view-lines').waitFor({ timeout: 30_000 });
      await expect.poll(() => editorText(queryEditor)).toContain('query TokenPrices {');
      expect(await editorText(queryEditor)).toContain(
        exampleQuery(example)
          .split('\n')
          .find((l) => l.includes('metric('))!
          .trim(),
      );

      await page.locator('button[data-name="headers"]').click();
      const headersEditor = page.locator('.graphiql-editor-tool .graphiql-editor:visible').first();
      await expect.poll(() => editorText(headersEditor)).toMatch(/\{\s*"x-api-key"\s*:\s*""\s*\}/);

      await vi.waitFor(
        async () => {
          await headersEditor.locator('.view-lines').click();
          await page.keyboard.press('Control+A');
          await page.keyboard.press('Backspace');
          expect(await editorText(headersEditor)).toBe('');
        },
        { timeout: 10_000, interval: 250 },
      );
      // insertText, not typing key by key: the editor would auto-close every quote and brace.
      await page.keyboard.insertText(JSON.stringify({ 'x-api-key': TEST_KEY }));
      await expect.poll(() => editorText(headersEditor)).toBe(JSON.stringify({ 'x-api-key': TEST_KEY }));

      await page.locator('.graphiql-execute-button').click();

      // The example asks for the last stored month: the answer starts with its first point.
      const response = page.locator('.graphiql-response').first();
      await expect.poll(() => editorText(response), { timeout: 20_000 }).toContain(`"lastDate": "${TEST_LAST_DAY}"`);
      const result = await editorText(response);
      expect(result).toContain('"project": "ethereum"');
      expect(result).toMatch(new RegExp(`"date": "${example.from.slice(0, 7)}-\\d{2}"`));
      expect(result).not.toContain('"errors"');
      await page.screenshot({ path: SCREENSHOT });

      // GraphiQL writes its storage half a second after an edit.
      await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:headers') ?? '')).toContain(TEST_KEY);
      // Reloaded, the page still holds no key, yet the browser remembers the one typed.
      const again = await page.reload();
      expect((await again?.text()) ?? '').not.toContain(TEST_KEY);
      await page.locator('button[data-name="headers"]').click();
      await expect
        .poll(() => editorText(page.locator('.graphiql-editor-tool .graphiql-editor:visible').first()))
        .toContain(TEST_KEY);
    },
  );
});
