import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** Points written as the database's bytes (spliced), and the extra fields of etf-num-products, beside a plain field. */
const QUERY = `{ metric(name: etf_num_products, projects: [blackrock, fidelity], from: "2026-06-20") {
  name series { slug points { date value } detailed: points { date value extra } } } }`;

/** Media types RFC 9110 allows for application/json: any case, whitespace before `;`. */
const SPELLINGS = [
  'Application/JSON',
  'APPLICATION/JSON; CHARSET=UTF-8',
  'application/json ; charset=utf-8',
  'application/json;charset="utf-8"',
];

// What is tested is the route's HTTP handling, the same for both stores.
const pglite = STORE_KINDS.find((k) => k.name === 'pglite')!;

describe('GraphQL answers in every transport and media type', () => {
  let service: TestService;
  let json: { text: string; data: unknown };

  beforeAll(async () => {
    service = await startTestService(pglite, { RESPONSE_CACHE_MB: '0' });
    const res = await post(QUERY, { accept: 'application/json' });
    expect(res.status).toBe(200);
    const text = await res.text();
    json = { text, data: JSON.parse(text) };
  }, 120_000);
  afterAll(async () => service?.stop());

  const post = (query: string, headers: Record<string, string>) =>
    service.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
      signal: AbortSignal.timeout(20_000),
    });

  it('answers a query asked as an event stream with the data of its JSON answer, and no splice marker', async () => {
    const res = await post(QUERY, { accept: 'text/event-stream' });
    const text = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(text.includes('\u0000') || text.includes('\\u0000')).toBe(false);
    const events = [...text.matchAll(/^event: (\w+)\ndata: ?(.*)$/gm)].map(([, event, data]) => ({ event, data }));
    expect(events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(JSON.parse(events[0]!.data!)).toEqual(json.data);
    expect(events[0]!.data).toBe(json.text);
  });

  it("answers a query asked in multipart with its JSON answer's bytes, each part with its own length", async () => {
    const res = await post(QUERY, { accept: 'multipart/mixed' });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/mixed; boundary="-"');
    expect(text.includes('\u0000') || text.includes('\\u0000')).toBe(false);
    const head = /\r\n---\r\nContent-Type: application\/json; charset=utf-8\r\nContent-Length: (\d+)\r\n\r\n/g;
    const parts = [...text.matchAll(head)];
    expect(parts).toHaveLength(1);
    const start = Buffer.byteLength(text.slice(0, parts[0]!.index + parts[0]![0].length));
    const body = bytes.subarray(start, start + Number(parts[0]![1])).toString('utf8');
    expect(body).toBe(json.text);
    expect(text.endsWith(`${json.text}\r\n-----\r\n`)).toBe(true);
  });

  it.each(SPELLINGS)('reads a body sent as %s as application/json: the same bytes', async (contentType) => {
    const res = await post(QUERY, { 'content-type': contentType, accept: 'application/json' });

    expect(res.status).toBe(200);
    expect(await res.text()).toBe(json.text);
  });

  it('still refuses a body of another media type with 415', async () => {
    const res = await post(QUERY, { 'content-type': 'text/plain', accept: 'application/json' });
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };

    expect(res.status).toBe(415);
    expect(body.errors[0]!.extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('reads the Accept header case-insensitively for refusals before Yoga too', async () => {
    const res = await service.fetch('/graphql', {
      method: 'POST',
      key: null,
      headers: { 'content-type': 'application/json', accept: 'Application/GraphQL-Response+JSON' },
      body: JSON.stringify({ query: '{ metrics { name } }' }),
    });

    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
  });
});
