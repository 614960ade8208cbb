import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ApiError } from '../api/api-error.js';
import type { PageCall } from './page-services.js';
import { PACKAGE_ROOT } from '../package-root.js';
import { clipped } from '../clipped.js';
import { sendWhole } from '../http/send-json.js';

/**
 * `GET /explore` and its assets: the chart explorer, static files that need no key and
 * hold none (the page asks for the key and keeps it in the browser). The chart library
 * is uPlot from node_modules, served from here: no CDN, no build step.
 */
export function handleExplorePage(call: PageCall): Promise<void> {
  return send(call, ASSETS.get('')!);
}

/** `GET /explore/<asset>`. */
export function handleExploreAsset(call: PageCall): Promise<void> {
  const asset = ASSETS.get(call.param);
  if (asset === undefined) throw new ApiError('not-found', `nothing is served at /explore/${clipped(call.param)}`);
  return send(call, asset);
}

// Private

interface Asset {
  type: string;
  body: Buffer;
}

const require = createRequire(import.meta.url);
/**
 * Found from the package root, not beside this module: tsc compiles this file to
 * dist/src/pages/ and copies no static files, so the page has one home in source and build.
 */
const own = (name: string) => new URL(`src/pages/explorer/${name}`, PACKAGE_ROOT);

/** Read once at start-up: a few kilobytes of our own and uPlot's 50 KB. */
const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['', { type: 'text/html; charset=utf-8', body: readFileSync(own('index.html')) }],
  ['explorer.js', { type: 'text/javascript; charset=utf-8', body: readFileSync(own('explorer.js')) }],
  ['explorer.css', { type: 'text/css; charset=utf-8', body: readFileSync(own('explorer.css')) }],
  [
    'uplot.js',
    { type: 'text/javascript; charset=utf-8', body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')) },
  ],
  ['uplot.css', { type: 'text/css; charset=utf-8', body: readFileSync(require.resolve('uplot/dist/uPlot.min.css')) }],
]);

/** Scripts only from this origin; uPlot sets element styles, hence inline styles. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
  "connect-src 'self'; img-src 'self' blob: data:; form-action 'self'; base-uri " +
  "'none'; frame-ancestors 'none'";

function send({ req, res }: PageCall, asset: Asset): Promise<void> {
  const headers = [
    ['content-type', asset.type],
    ['cache-control', 'public, max-age=300'],
    ['content-security-policy', CSP],
  ] as const;
  return sendWhole(req, res, { headers, body: asset.body, compress: false });
}
