import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paramsOf } from '../src/graphql/known-operations.js';
import { requestInProcess } from './support/in-process.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * A repeated GraphQL query is answered without Yoga's HTTP layer (known-operations.ts).
 * Each case is sent three times: first to Yoga (its document is new), then a request of
 * the same document Yoga executes (so the document is learned), then the case again,
 * which takes the shorter path when it can. The first and the third answer must be the
 * same bytes, with the same status and headers: the shorter path is only faster.
 */

interface Case {
  name: string;
  query: string;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
  /** A body of its own, instead of one made of the fields above. */
  body?: string;
  accept?: string;
  contentType?: string;
  /** The URL the case is sent to (/graphql when absent); the primer always goes to /graphql. */
  path?: string;
  /** The request that teaches the document (the case itself when absent). */
  primer?: { variables?: unknown; operationName?: unknown };
  /** Whether the third request takes the shorter path. */
  known: boolean;
}

const SERIES = 'metric(name: token_price_usd, projects: [ethereum, solana], from: "2026-06-01", to: "2026-06-05") { series { slug points { date value } } }';
const WITH_VARIABLES = 'query Q($projects: [Project!], $from: Date) { metric(name: token_price_usd, projects: $projects, from: $from, to: "2026-06-05") { series { slug firstDate lastDate points { date value } } } }';
const TWO_OPERATIONS = `query A { ${SERIES} } query B { metrics { name } }`;

const CASES: Case[] = [
  { name: 'a plain query', query: `{ ${SERIES} }`, known: true },
  { name: 'a query with variables', query: WITH_VARIABLES, variables: { projects: ['solana'], from: '2026-06-03' }, known: true },
  { name: 'other variables than the primer', query: WITH_VARIABLES, variables: { projects: ['ethereum'] }, primer: { variables: { projects: ['solana'] } }, known: true },
  { name: 'variables of the wrong type', query: WITH_VARIABLES, variables: { projects: 'nope', from: 7 }, primer: { variables: {} }, known: true },
  { name: 'variables that are an unknown enum value, many times', query: WITH_VARIABLES, variables: { projects: Array.from({ length: 80 }, (_, i) => `p${i}`) }, primer: { variables: {} }, known: true },
  { name: 'variables of another shape, an empty operation name (the fuzz found)', query: WITH_VARIABLES, variables: { from: '', to: { a: null, b: { c: 1 } } }, operationName: '', primer: { variables: {}, operationName: null }, known: false },
  { name: 'variables of another shape', query: WITH_VARIABLES, variables: { from: '', to: { a: null, b: { c: 1 } } }, primer: { variables: {} }, known: true },
  { name: 'null variables', query: `{ ${SERIES} }`, variables: null, known: true },
  { name: 'an operation chosen by name', query: TWO_OPERATIONS, operationName: 'B', known: true },
  { name: 'the other operation of the same document', query: TWO_OPERATIONS, operationName: 'A', primer: { operationName: 'B' }, known: true },
  { name: 'no operation named, of two', query: TWO_OPERATIONS, primer: { operationName: 'A' }, known: false },
  { name: 'an operation name the document lacks', query: TWO_OPERATIONS, operationName: 'C', primer: { operationName: 'A' }, known: false },
  { name: 'an empty operation name', query: `{ ${SERIES} }`, operationName: '', primer: { operationName: null }, known: false },
  { name: 'a null operation name', query: `{ ${SERIES} }`, operationName: null, primer: {}, known: true },
  { name: 'an operation name that was the mark for none (\\u0001)', query: `{ ${SERIES} }`, operationName: '\u0001', primer: { operationName: null }, known: false },
  { name: 'extensions', query: `{ ${SERIES} }`, extensions: { client: 'x' }, known: true },
  { name: 'extensions that are not an object', query: `{ ${SERIES} }`, extensions: 'x', primer: {}, known: false },
  { name: 'a parameter Yoga does not know', query: `{ ${SERIES} }`, body: `{"query":${JSON.stringify(`{ ${SERIES} }`)},"other":1}`, known: false },
  { name: 'a body with a byte-order mark', query: `{ ${SERIES} }`, body: `\uFEFF{"query":${JSON.stringify(`{ ${SERIES} }`)}}`, known: false },
  { name: 'application/json accepted', query: `{ ${SERIES} }`, accept: 'application/json', known: true },
  { name: 'anything accepted', query: `{ ${SERIES} }`, accept: '*/*', known: true },
  { name: 'no accept header', query: `{ ${SERIES} }`, accept: '', known: true },
  { name: 'application/json accepted, variables wrong', query: WITH_VARIABLES, variables: { projects: 1 }, accept: 'application/json', primer: { variables: {} }, known: true },
  { name: 'application/graphql+json sent', query: `{ ${SERIES} }`, contentType: 'application/graphql+json', known: true },
  { name: 'json with a charset', query: `{ ${SERIES} }`, contentType: 'application/json; charset=utf-8', known: true },
  { name: 'a URL ending in /health, which Yoga answers as its health check', query: `{ ${SERIES} }`, path: '/graphql?next=/health', primer: {}, known: false },
  { name: 'an event stream accepted', query: `{ ${SERIES} }`, accept: 'text/event-stream', known: false },
  { name: 'a field error (a range that ends before it starts)', query: '{ metric(name: token_price_usd, projects: [ethereum], from: "2026-06-05", to: "2026-06-01") { series { slug } } }', known: true },
  { name: 'points through fragments and __typename', query: `{ metric(name: token_price_usd, projects: [ethereum], from: "2026-06-01", to: "2026-06-03") { __typename series { ...S } } } fragment S on Series { slug points { __typename date value } }`, known: true },
  { name: 'the catalog', query: '{ metrics { name extraFields projects } }', known: true },
  { name: 'a document that fails validation', query: '{ metrics { name projects { slug } } }', known: false },
  { name: 'a document over a limit', query: `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: metrics { name }`).join(' ')} }`, known: false },
  { name: 'a subscription sent as JSON', query: 'subscription { seriesUpdated(name: token_price_usd) { slug } }', known: false },
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`repeated GraphQL queries on ${kind.name}`, () => {
    let service: TestService;
    beforeAll(async () => {
      // No response cache: it would answer every repeat before either path.
      service = await startTestService(kind, { METRICS: 'public', RESPONSE_CACHE_MB: '0' });
    });
    afterAll(async () => service?.stop());

    const send = (c: Case, body: string, path = c.path ?? '/graphql') => {
      const headers: Record<string, string> = { 'x-api-key': TEST_KEY, 'content-type': c.contentType ?? 'application/json' };
      if (c.accept !== '') headers.accept = c.accept ?? 'application/graphql-response+json';
      return requestInProcess(service.running.app, path, { method: 'POST', headers, body });
    };
    const bodyOf = (c: Case, query: string, fields: { variables?: unknown; operationName?: unknown; extensions?: unknown }) =>
      c.body?.replace(JSON.stringify(c.query), JSON.stringify(query)) ?? JSON.stringify({ query, ...fields });
    const answered = async () => {
      const text = (await service.running.services.metrics.render()).body;
      return Number(/^metrics_graphql_repeat_answers_total (\d+)/m.exec(text)?.[1]);
    };
    /** Status, headers but the request id and date, and body: what a client sees. */
    const seen = async (res: Response) => ({
      status: res.status,
      headers: [...res.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date'),
      body: await res.text(),
    });

    it.each(CASES.map((c, i) => ({ ...c, i })))('answers $name alike both ways', async (c) => {
      // A document of the case's own (a comment differs), so no earlier case taught it.
      const query = `${c.query}\n# case ${c.i}`;
      const fields = { variables: c.variables, operationName: c.operationName, extensions: c.extensions };
      const before = await answered();
      const first = await seen(await send(c, bodyOf(c, query, fields)));
      expect(await answered()).toBe(before);
      if (c.primer !== undefined) await (await send(c, bodyOf(c, query, { ...fields, ...c.primer }), '/graphql')).text();
      const taught = await answered();
      const third = await seen(await send(c, bodyOf(c, query, fields)));
      expect(await answered()).toBe(taught + (c.known ? 1 : 0));
      expect(third).toEqual(first);
      if (c.i === 0) expect(first.body).toMatch(/^\{"data":\{"metric":\{"series":\[\{"slug":"ethereum","points":\[\{"date":"2026-06-01","value":/);
    });

    it('answers a name and a query that run together as a known pair does as Yoga: the query is another', async () => {
      // A known document whose comment holds a NUL, and a request whose name ends where that
      // document's text did: run together, the two pairs are the same characters.
      const c: Case = { name: 'a NUL in the name', query: '', known: false };
      const query = '{ metrics { name } } # a NUL in the name';
      const head = `query A { ${SERIES} } #`;
      const request = JSON.stringify({ query, operationName: `A\u0000${head}` });
      const first = await seen(await send(c, request));
      await (await send(c, JSON.stringify({ query: `${head}\u0000${query}`, operationName: 'A' }))).text();
      const taught = await answered();
      const third = await seen(await send(c, request));
      expect(await answered()).toBe(taught);
      expect(third).toEqual(first);
    });

    it('refuses a repeat the key cannot pay for as Yoga does: a field error with its code, status and Retry-After', async () => {
      const other = 'test-key-other-0123456789abcdef';
      const limited = await startTestService(kind, { API_KEYS: `${TEST_KEY},${other}`, RESPONSE_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '5', METRICS: 'public' });
      try {
        const post = (query: string, key: string) => requestInProcess(limited.running.app, '/graphql', {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query }),
        });
        const repeats = async () => Number(/^metrics_graphql_repeat_answers_total (\d+)$/m.exec((await limited.running.services.metrics.render()).body)?.[1]);
        // Four units (four projects, a year each) of the burst's five: the second request is
        // refused by the series field's charge, inside its execution.
        const query = '{ metric(name: token_price_usd, projects: [arbitrum, ethereum, fogo, solana], from: "2025-07-01", to: "2026-06-30") { series { slug } } }';
        // One key sends the document twice: the second is a repeat.
        expect((await post(query, TEST_KEY)).status).toBe(200);
        const before = await repeats();
        const repeat = await post(query, TEST_KEY);
        expect(await repeats()).toBe(before + 1);
        // The other key sends two new documents: both through Yoga.
        expect((await post(`${query} # 1`, other)).status).toBe(200);
        const fresh = await post(`${query} # 2`, other);
        expect(await repeats()).toBe(before + 1);
        expect(repeat.status).toBe(429);
        expect(fresh.status).toBe(429);
        expect(repeat.headers.get('content-type')).toBe(fresh.headers.get('content-type'));
        expect(Number(repeat.headers.get('retry-after'))).toBeGreaterThan(200);
        expect(Math.abs(Number(repeat.headers.get('retry-after')) - Number(fresh.headers.get('retry-after')))).toBeLessThanOrEqual(1);
        const body = JSON.parse(await repeat.text()) as { data: unknown; errors: { extensions: { code: string } }[] };
        expect(body).toEqual(JSON.parse(await fresh.text()));
        expect(body.data).toEqual({ metric: null });
        expect(body.errors[0]!.extensions.code).toBe('RATE_LIMITED');
      } finally {
        await limited.stop();
      }
    });

    it('tells apart an operation name left out, null and empty', () => {
      expect(paramsOf(Buffer.from('{"query":"{a}","operationName":null}'))).toEqual({ query: '{a}', operationName: null });
      expect(paramsOf(Buffer.from('[{"query":"{a}"}]'))).toBeUndefined();
      expect(paramsOf(Buffer.from('{"query":1}'))).toBeUndefined();
    });
  });
}
