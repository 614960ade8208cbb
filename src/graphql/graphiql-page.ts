import type { IncomingMessage, ServerResponse } from 'node:http';
import { appendVary, chooseEncoding, matchesEtag, type Encoding } from '../http/negotiate.js';
import { compress, weakEtagOf } from '../http/send-json.js';

/**
 * Sends GraphiQL's page as Yoga renders it: about 9 MB of HTML (the editor's scripts are
 * inline), which went out whole on every visit. The page is rendered for each request (its
 * example query follows the data), but compressed once per distinct page and kept, and it
 * carries a validator: a browser that has it gets a bodiless 304.
 */
export type GraphiqlPage = (req: IncomingMessage, res: ServerResponse, rendered: Response, head: boolean) => Promise<void>;

export function createGraphiqlPage(): GraphiqlPage {
  /** The latest page and its compressed forms, made when first asked for. */
  let kept: { etag: string; plain: Buffer; compressed: Map<Encoding, Promise<Buffer>> } | undefined;
  return async (req, res, rendered, head) => {
    const plain = Buffer.from(await rendered.arrayBuffer());
    const etag = weakEtagOf(plain);
    if (kept?.etag !== etag) kept = { etag, plain, compressed: new Map() };
    const page = kept;
    res.statusCode = rendered.status;
    rendered.headers.forEach((value, name) => {
      if (name !== 'content-length') res.setHeader(name, value);
    });
    res.setHeader('etag', etag);
    // Kept by the browser, but asked about again each visit: the example query can change.
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
    if (matchesEtag(req.headers['if-none-match'], etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    const encoding = chooseEncoding(req.headers['accept-encoding']);
    let body = page.plain;
    if (encoding !== undefined) {
      let compressed = page.compressed.get(encoding);
      if (compressed === undefined) {
        // Harder than an answer's: done once per page, in Node's thread pool (brotli takes the 9 MB page to about 1.9 MB, gzip to 2.4 MB).
        compressed = compress(page.plain, encoding, 'once');
        page.compressed.set(encoding, compressed);
      }
      body = await compressed;
      res.setHeader('content-encoding', encoding);
    }
    res.setHeader('content-length', body.length);
    res.end(head ? undefined : body);
  };
}
