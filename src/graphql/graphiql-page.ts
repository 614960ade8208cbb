import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphiQLOptions } from 'graphql-yoga';
import { keepBody, sendKept, type KeptBody } from '../http/send-json.js';
import type { GraphqlServices } from './graphql-services.js';
import { addressOf, loadGraphiqlAssets } from './graphiql-assets.js';

/**
 * Sends GraphiQL's page as Yoga renders it (with {@link renderGraphiqlPage}), after counting
 * the load against the client address's allowance. The page is rendered for each request (its
 * example query follows the data), kept with its compressed forms while it stays the same, and
 * carries a validator: a browser that has it gets a bodiless 304.
 */
export type GraphiqlPage = (
  req: IncomingMessage,
  res: ServerResponse,
  render: () => Response | Promise<Response>,
) => Promise<void>;

export function createGraphiqlPage(services: Pick<GraphqlServices, 'graphiqlLoads'>): GraphiqlPage {
  /** The latest page. */
  let kept: KeptBody | undefined;
  return async (req, res, render) => {
    await services.graphiqlLoads.take(addressOf(req));
    const rendered = await render();
    const plain = Buffer.from(await rendered.arrayBuffer());
    if (kept === undefined || !plain.equals(kept.plain)) kept = keepBody(plain);
    rendered.headers.forEach((value, name) => {
      if (name !== 'content-length') res.setHeader(name, value);
    });
    // Kept by the browser, but asked about again each visit: the example query can change.
    res.setHeader('cache-control', 'no-cache');
    await sendKept(req, res, kept);
  };
}

/**
 * GraphiQL's page for Yoga's `renderGraphiQL`: a few kilobytes that name the editor's files
 * (graphiql-assets.ts), where the package's own renderer puts them inline. Monaco
 * starts its workers from their URLs on this origin.
 */
export async function renderGraphiqlPage(options: GraphiQLOptions): Promise<string> {
  const assets = await loadGraphiqlAssets();
  // In a script element only `</script` or `<!--` could end it early: no `<` is left in the JSON.
  const json = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${escapeHtml(options.favicon ?? assets.icon)}" />
    <link rel="stylesheet" href="${assets.style}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${json(assets.workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
    </script>
    <script src="${assets.script}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${json(options)});
    </script>
  </body>
</html>
`;
}

// Private

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
