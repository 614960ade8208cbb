import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { prerequisite } from './ci.js';

/** Debian's Chromium (`apt-get install -y chromium`); pages are bundled, so no network is needed. */
export const CHROMIUM = '/usr/bin/chromium';

/** Whether browser suites run here; under CI a missing Chromium fails the run instead. */
export const BROWSER_AVAILABLE = prerequisite(
  existsSync(CHROMIUM),
  `Chromium (${CHROMIUM})`,
  'install it with apt-get install -y chromium',
);

/** Headless, as root, with nothing that reaches for the network (this machine has none). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The text an editor (GraphiQL's Monaco) shows, with the non-breaking spaces it renders turned back into spaces. */
export async function editorText(editor: Locator): Promise<string> {
  return (await editor.locator('.view-lines').first().innerText()).replaceAll('\u00a0', ' ');
}
