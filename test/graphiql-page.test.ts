import { Agent, request } from 'node:http';
import * as packaged from '@graphql-yoga/render-graphiql/graphiql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { ENV_DEFAULTS, loadConfig } from '../src/config.js';
import { createMemoryRateLimitStore } from '../src/limits/memory-bucket-store.js';
import { createPageLoadLimit } from '../src/limits/page-loads.js';
import type { RateLimitStore } from '../src/limits/rate-limiter.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const pglite = STORE_KINDS.find((k) => k.name === 'pglite')!;

/** How a browser asks for the page. */
const PAGE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

const JS = 'text/javascript; charset=utf-8';
/** The package holds its icon as a base64 data: URL. */
const ICON = Buffer.from(packaged.favicon.split(',')[1]!, 'base64');
/** Each file the page names, by the pattern of its URL, with its type and the package's bytes. */
const ASSETS: [RegExp, string, Buffer][] = [
  [/\/graphql\/assets\/graphiql-[0-9a-f]{16}\.js/, JS, Buffer.from(packaged.js)],
  [/\/graphql\/assets\/graphiql-[0-9a-f]{16}\.css/, 'text/css; charset=utf-8', Buffer.from(packaged.css)],
  [/\/graphql\/assets\/favicon-[0-9a-f]{16}\.ico/, 'image/x-icon', ICON],
  [/\/graphql\/assets\/editor-worker-[0-9a-f]{16}\.js/, JS, Buffer.from(packaged.editorWorkerService)],
  [/\/graphql\/assets\/json-worker-[0-9a-f]{16}\.js/, JS, Buffer.from(packaged.jsonWorker)],
  [/\/graphql\/assets\/graphql-worker-[0-9a-f]{16}\.js/, JS, Buffer.from(packaged.graphqlWorker)],
];

describe('the limit on page loads per address', () => {
  it('defaults to 60 a minute, takes 0 as no limit, and names a bad value', () => {
    expect(loadConfig({}).graphiqlLoadsPerMinute).toBe(60);
    expect(ENV_DEFAULTS.GRAPHIQL_LOADS_PER_MINUTE).toBe(60);
    expect(loadConfig({ GRAPHIQL_LOADS_PER_MINUTE: '0' }).graphiqlLoadsPerMinute).toBe(0);
    expect(() => loadConfig({ GRAPHIQL_LOADS_PER_MINUTE: '-1' })).toThrow(/GRAPHIQL_LOADS_PER_MINUTE/);
  });

  it('lets an address load perMinute times, then refuses it with Retry-After until one refilled', () => {
    let now = 1_000_000;
    const limit = createPageLoadLimit(3, createMemoryRateLimitStore(), () => now);
    for (let i = 0; i < 3; i += 1) expect(limit.take('10.0.0.1')).toBeUndefined();
    const refusal = catchError(() => limit.take('10.0.0.1'));
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ kind: 'rate-limited', headers: { 'retry-after': '20' } });
    expect((refusal as Error).message).toBe(
      'too many page loads from this address (at most 3 a minute); try again in 20 s',
    );
    expect(catchError(() => limit.take('10.0.0.2'))).toBeUndefined();
    now += 19_000;
    expect(catchError(() => limit.take('10.0.0.1'))).toMatchObject({ headers: { 'retry-after': '1' } });
    now += 1_000;
    expect(catchError(() => limit.take('10.0.0.1'))).toBeUndefined();
    expect(catchError(() => limit.take('10.0.0.1'))).toBeInstanceOf(ApiError);
  });

  it('refuses the load that empties the bucket when the store answers later (Redis), then without asking', async () => {
    const memory = createMemoryRateLimitStore();
    let asked = 0;
    const later: RateLimitStore = {
      take: (...args) => {
        asked += 1;
        return Promise.resolve(memory.take(...args));
      },
    };
    const limit = createPageLoadLimit(2, later, () => 5_000);
    await limit.take('10.0.0.1');
    await limit.take('10.0.0.1');
    const refused = { kind: 'rate-limited', headers: { 'retry-after': '30' } };
    await expect(limit.take('10.0.0.1')).rejects.toMatchObject(refused);
    expect(() => limit.take('10.0.0.1')).toThrow(ApiError);
    expect(asked).toBe(3);
  });

  it('is no limit at 0 a minute', () => {
    const limit = createPageLoadLimit(0, createMemoryRateLimitStore(), () => 0);
    for (let i = 0; i < 100; i += 1) expect(limit.take('10.0.0.1')).toBeUndefined();
  });
});

describe("GraphiQL's page and its files", { timeout: 60_000 }, () => {
  /** No limit on page loads: these tests load the page and every file many times. */
  let unlimited: TestService;
  /** The default limit. */
  let limited: TestService;

  beforeAll(async () => {
    [unlimited, limited] = await Promise.all([
      startTestService(pglite, { GRAPHIQL_LOADS_PER_MINUTE: '0' }),
      startTestService(pglite),
    ]);
  }, 120_000);

  afterAll(async () => {
    for (const agent of agents.values()) agent.destroy();
    await unlimited?.stop();
    await limited?.stop();
  });

  it('is a page of a few kilobytes that names its files, holds no key, and may not be framed', async () => {
    const page = await unlimited.get('/graphql', { key: null, headers: PAGE });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(Buffer.byteLength(html)).toBeLessThan(2 ** 20);
    expect(Number(page.headers.get('content-length'))).toBe(Buffer.byteLength(html));
    for (const [pattern] of ASSETS) expect(html).toMatch(pattern);
    expect(html).toContain('<title>Metrics GraphiQL</title>');
    expect(html).not.toContain(packaged.js.slice(0, 200));
    expect(html).not.toContain(TEST_KEY);
    expect(html).not.toMatch(/mk_[A-Za-z0-9_-]{20,}/);
  });

  it('serves each file with its type, cached for good, compressed when asked, revalidated to a 304', async () => {
    const html = await (await unlimited.get('/graphql', { key: null, headers: PAGE })).text();
    for (const [pattern, type, bytes] of ASSETS) {
      const path = pattern.exec(html)![0];
      const plain = await unlimited.get(path, { key: null });
      expect(plain.status, path).toBe(200);
      expect(plain.headers.get('content-type'), path).toBe(type);
      expect(plain.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-encoding'), path).toBeNull();
      expect(plain.headers.get('vary'), path).toContain('Accept-Encoding');
      expect(Buffer.from(await plain.arrayBuffer()).equals(bytes), path).toBe(true);
      const etag = plain.headers.get('etag')!;
      expect(etag, path).toMatch(/^W\/".+"$/);
      for (const encoding of ['br', 'gzip']) {
        const packed = await unlimited.get(path, { key: null, headers: { 'accept-encoding': encoding } });
        expect(packed.headers.get('content-encoding'), path).toBe(encoding);
        expect(Number(packed.headers.get('content-length')), path).toBeLessThan(bytes.length);
        expect(packed.headers.get('etag'), path).toBe(etag);
        expect(Buffer.from(await packed.arrayBuffer()).equals(bytes), path).toBe(true);
      }
      const headers = { 'if-none-match': etag, 'accept-encoding': 'br' };
      const again = await unlimited.get(path, { key: null, headers });
      expect(again.status, path).toBe(304);
      expect(again.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      expect(await again.text(), path).toBe('');
      const head = await unlimited.get(path, { key: null, method: 'HEAD' });
      const shown = [head.status, head.headers.get('content-length'), await head.text()];
      expect(shown, path).toEqual([200, String(bytes.length), '']);
    }
  });

  it('moves a third of the bytes or less for a whole first visit when compression is accepted', async () => {
    const html = (await rawGet(unlimited.url, '/graphql', PAGE)).text;
    const visit = async (encoding: string) => {
      const page = await rawGet(unlimited.url, '/graphql', { ...PAGE, 'accept-encoding': encoding });
      const paths = ASSETS.map(([pattern]) => pattern.exec(html)![0]);
      const asked = { 'accept-encoding': encoding };
      const files = await Promise.all(paths.map((path) => rawGet(unlimited.url, path, asked)));
      return { page: page.bytes, files: files.reduce((n, file) => n + file.bytes, 0) };
    };
    const plain = await visit('identity');
    const brotli = await visit('br');
    expect(plain.page).toBeLessThan(2 ** 20);
    expect(brotli.page).toBeLessThan(plain.page);
    expect(plain.files).toBe(ASSETS.reduce((n, [, , bytes]) => n + bytes.length, 0));
    expect(brotli.page + brotli.files).toBeLessThan((plain.page + plain.files) / 3);
  });

  it('answers an unknown file with 404 and other methods with 405', async () => {
    const missing = await unlimited.get('/graphql/assets/graphiql-0000000000000000.js', { key: null });
    expect(missing.status).toBe(404);
    const post = await unlimited.get('/graphql/assets/anything.js', { key: null, method: 'POST' });
    expect(post.status).toBe(405);
  });

  it("gives a client hammering page loads 429s; a keyed client's queries keep being answered", async () => {
    const { url } = limited;
    const html = (await rawGet(url, '/graphql', PAGE)).text;
    const script = ASSETS[0]![0].exec(html)![0];
    const statuses: number[] = [];
    const refusals: RawAnswer[] = [];
    let answered = 0;
    let keyedDone = false;
    const started = performance.now();
    // 16 connections loading the page and the editor's largest file, uncompressed, as fast as they are answered.
    const hostile = Array.from({ length: 16 }, async (_, i) => {
      for (let n = 0; n < 40 && !(keyedDone && n > 10); n += 1) {
        const path = n % 2 === 0 ? '/graphql' : script;
        const answer = await rawGet(url, path, { ...PAGE, 'accept-encoding': 'identity' }, i);
        statuses.push(answer.status);
        if (answer.status === 429) refusals.push(answer);
      }
    });
    const keyed = (async () => {
      for (let n = 0; n < 20; n += 1) {
        const res = await limited.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query: `{ metrics { name } n${n}: __typename }` }),
        });
        const body = (await res.json()) as { data?: { metrics?: unknown[] }; errors?: unknown };
        if (res.status === 200 && body.errors === undefined && (body.data?.metrics?.length ?? 0) > 0) answered += 1;
      }
      keyedDone = true;
    })();
    await Promise.all([...hostile, keyed]);
    const seconds = (performance.now() - started) / 1000;

    expect(answered).toBe(20);
    const served = statuses.filter((s) => s === 200).length;
    // One load per second refills; the first page load above took one as well.
    expect(served).toBeLessThanOrEqual(ENV_DEFAULTS.GRAPHIQL_LOADS_PER_MINUTE + Math.ceil(seconds));
    expect(refusals.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    for (const refusal of refusals) {
      expect(Number(refusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const body = JSON.parse(refusal.text) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('RATE_LIMITED');
    }
  });
});

// Private

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Bytes on the wire (the body as sent, compressed or not). */
  bytes: number;
  text: string;
}

/** One connection per hostile client: requests on it go one after another, as a browser's would. */
const agents = new Map<number, Agent>();

/** A GET over a socket, its body left as sent (fetch would decompress it and ask for compression itself). */
function rawGet(base: string, path: string, headers: Record<string, string>, connection = -1): Promise<RawAnswer> {
  let agent = agents.get(connection);
  if (agent === undefined) agents.set(connection, (agent = new Agent({ keepAlive: true, maxSockets: 1 })));
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = res.headers['content-encoding'] === undefined ? body.toString('utf8') : '';
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: body.length, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function catchError(run: () => unknown): unknown {
  try {
    run();
    return undefined;
  } catch (error) {
    return error;
  }
}
