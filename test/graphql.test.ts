import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOG, type MetricDefinition } from '../src/catalog/load-catalog.js';
import type { Store } from '../src/db/store.js';
import { upsertPoints } from '../src/db/write-points.js';
import { enumName } from './support/graphql-names.js';
import { heard, startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** A fixed 20-day range inside the seeded year that ends on 2026-06-30. */
const RANGE = { from: '2026-03-01', to: '2026-03-20' } as const;

interface GraphqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string };
}

interface GraphqlBody<Data = Record<string, unknown>> {
  data?: Data | null;
  errors?: GraphqlError[];
}

interface SeriesBody {
  slug: string;
  project: string;
  firstDate: string | null;
  lastDate: string | null;
  points: { date: string; value: number; extra: Record<string, unknown> | null }[];
}

type RestPoint = { date: string; value: number } & Record<string, unknown>;

const metricDef = (name: string): MetricDefinition => {
  const metric = CATALOG.byName.get(name);
  if (metric === undefined) throw new Error(`the catalog has no metric ${name}`);
  return metric;
};

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`GraphQL on ${kind.name}`, () => {
    const probe = createStoreProbe();
    let service: TestService;

    beforeAll(async () => {
      // The response cache off: these tests count the statements the loaders send (the cache has its own suite).
      service = await startTestService(kind, { RESPONSE_CACHE_MB: '0' }, { wrapStore: probe.wrap });
    });

    afterAll(async () => {
      await service?.stop();
    });

    beforeEach(() => probe.reset());

    const ask = async <Data = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => {
      const res = await service.graphql(query, variables);
      return { status: res.status, body: (await res.json()) as GraphqlBody<Data> };
    };

    /**
     * Asserts a GraphQL error response refusing the request: the status, the media type, no data, one error with
     * `code`.
     */
    const expectRequestError = async (res: Response, status: number, type: string, code: string) => {
      const text = await res.text();
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe(`${type}; charset=utf-8`);
      const body = JSON.parse(text) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(body).not.toHaveProperty('data');
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.extensions).toEqual({ code });
      expect(body.errors[0]!.message.length).toBeGreaterThan(0);
      return body.errors[0]!.message;
    };

    const rest = async (metric: string, params: Record<string, string>): Promise<Record<string, RestPoint[]>> => {
      const res = await service.get(`/v1/metrics/${metric}?${new URLSearchParams(params)}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, RestPoint[]>;
    };

    describe('schema', () => {
      it(
        'has a MetricName enum value per catalog metric and a Project enum value ' +
          'per distinct slug, each describing its original name',
        async () => {
          const { body } = await ask<
            Record<'metricName' | 'project', { enumValues: { name: string; description: string }[] }>
          >(`{
          metricName: __type(name: "MetricName") { enumValues { name description } }
          project: __type(name: "Project") { enumValues { name description } }
        }`);
          const metricValues = body.data!.metricName.enumValues;
          const projectValues = body.data!.project.enumValues;
          const slugs = [...new Set(CATALOG.metrics.flatMap((m) => m.projects))];

          expect(metricValues.map((v) => v.name).sort()).toEqual(
            [...CATALOG.metrics, ...CATALOG.derived].map((m) => enumName(m.name)).sort(),
          );
          expect(projectValues.map((v) => v.name).sort()).toEqual(slugs.map(enumName).sort());
          for (const metric of CATALOG.metrics) {
            expect(words(metricValues.find((v) => v.name === enumName(metric.name))?.description)).toContain(
              metric.name,
            );
          }
          for (const slug of slugs) {
            expect(words(projectValues.find((v) => v.name === enumName(slug))?.description)).toContain(slug);
          }
          expect(words(metricValues.find((v) => v.name === 'token_price_usd')?.description)).toContain(
            'token-price-usd',
          );
          expect(words(projectValues.find((v) => v.name === 'other_launchpads')?.description)).toContain(
            'other-launchpads',
          );
          expect(words(projectValues.find((v) => v.name === 'MSTR')?.description)).toContain('MSTR');
        },
      );
    });

    describe('metric', () => {
      it(
        'returns points ascending within inclusive bounds, series in request order ' + 'with duplicates collapsed',
        async () => {
          const full = await rest('token-price-usd', { project: 'solana,ethereum' });
          const solanaDays = full.solana!.map((p) => p.date);
          const [from, to] = [solanaDays[10]!, solanaDays[40]!];

          const { body } = await ask<{ metric: { series: SeriesBody[] } }>(
            `{ metric(name: token_price_usd, projects: [solana, ethereum, solana], ` +
              `from: "${from}", to: "${to}") { series { slug points { date } } } }`,
          );

          const series = body.data!.metric.series;
          expect(series.map((s) => s.slug)).toEqual(['solana', 'ethereum']);
          const dates = series[0]!.points.map((p) => p.date);
          expect(dates[0]).toBe(from);
          expect(dates.at(-1)).toBe(to);
          expect(dates).toEqual(solanaDays.filter((d) => d >= from && d <= to));
          expect(dates).toEqual([...dates].sort());
          expect(series[1]!.points.map((p) => p.date)).toEqual(
            full.ethereum!.map((p) => p.date).filter((d) => d >= from && d <= to),
          );
        },
      );

      it('returns every slug of a metric that does not require projects when projects are omitted', async () => {
        const { body } = await ask<{ metric: { series: SeriesBody[] } }>(
          `{ metric(name: token_price_usd, from: "${RANGE.from}", to: "${RANGE.to}") { series { slug } } }`,
        );

        expect(body.data!.metric.series.map((s) => s.slug)).toEqual(metricDef('token-price-usd').projects);
      });

      it('refuses a metric that requires projects when none are given, naming the allowed slugs', async () => {
        const { body } = await ask('{ metric(name: price) { name } }');

        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        for (const slug of metricDef('price').projects) expect(body.errors?.[0]?.message).toContain(slug);
      });

      it('refuses a project the metric does not allow, naming it and the allowed ones', async () => {
        const { body } = await ask('{ metric(name: price, projects: [bitcoin]) { name } }');

        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(body.errors?.[0]?.message).toContain('bitcoin');
        for (const slug of metricDef('price').projects) expect(body.errors?.[0]?.message).toContain(slug);
      });

      it('refuses a from date after the to date', async () => {
        const { body } = await ask('{ metric(name: token_price_usd, from: "2026-02-01", to: "2026-01-01") { name } }');

        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(body.errors?.[0]?.message).toContain('2026-02-01');
      });

      it('refuses a Date that is not a real calendar day, as a literal and as a variable', async () => {
        const literal = await ask('{ metric(name: token_price_usd, from: "2024-02-30") { name } }');
        const variable = await ask('query ($from: Date) { metric(name: token_price_usd, from: $from) { name } }', {
          from: '2024-02-30',
        });

        for (const { status, body } of [literal, variable]) {
          expect(status).toBe(400);
          expect(body.data ?? { metric: null }).toEqual({ metric: null });
          expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
          expect(body.errors?.[0]?.message).toContain('2024-02-30');
        }
      });

      it.each([
        ['from: 123', 'Argument "from" of "metric": Date expects a real calendar date as YYYY-MM-DD, got 123'],
        ['from: ETF', 'Argument "from" of "metric": Date expects a real calendar date as YYYY-MM-DD, got ETF'],
        [
          'asOf: 123',
          'Argument "asOf" of "metric": DateTime expects an RFC 3339 time with a ' +
            'zone, e.g. 2026-06-30T12:00:00Z (in UTC, within the years 0001-9999), ' +
            'or a date YYYY-MM-DD, got 123',
        ],
        [
          'name: "etf_aum_change_pct"',
          'Argument "name" of "metric" expects a value of the enum MetricName, written ' +
            'as a name without quotes, got "etf_aum_change_pct". Write it as etf_aum_change_pct.',
        ],
        [
          'projects: ["blackrock"]',
          'Argument "projects" of "metric" expects a value of the enum Project, ' +
            'written as a name without quotes, got "blackrock". Write it as blackrock.',
        ],
        [
          'interval: "week"',
          'Argument "interval" of "metric" expects a value of the enum Interval, ' +
            'written as a name without quotes, got "week". The closest: WEEK.',
        ],
        [
          'name: etf_aum_change',
          'Argument "name" of "metric" expects a value of the enum MetricName, written ' +
            'as a name without quotes, got etf_aum_change. The closest: etf_aum_change_pct.',
        ],
        [
          'fill: nothing',
          'Argument "fill" of "metric" expects a value of the enum Fill, written ' +
            'as a name without quotes, got nothing. Its values: NONE, NULL, ZERO, PREVIOUS.',
        ],
        [
          'window: "7"',
          'Argument "window" of "metric" expects an Int (a whole number from -2147483648 to 2147483647), got "7".',
        ],
      ])(
        "refuses the literal %s as the client's input, saying what the argument expects and what it got",
        async (argument, message) => {
          const name = argument.startsWith('name:') ? '' : 'name: etf_aum_change_pct, ';
          const { status, body } = await ask(`{ metric(${name}${argument}) { name } }`);

          expect(status).toBe(400);
          expect(body.data ?? { metric: null }).toEqual({ metric: null });
          expect(body.errors).toEqual([expect.objectContaining({ message, extensions: { code: 'BAD_USER_INPUT' } })]);
        },
      );

      it(
        'names the first values of a long enum and how many more there are when ' +
          'a mistyped one comes close to none',
        async () => {
          const { status, body } = await ask(
            `{ metric(name: etf_aum_change_pct, projects: [${'x'.repeat(70)}]) { name } }`,
          );

          expect(status).toBe(400);
          expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
          expect(body.errors?.[0]?.message).toMatch(
            /, got x{64}…\. Its values: \w+(, \w+){7}, and \d+ more \(the schema lists them all\)\.$/,
          );
        },
      );

      it('refuses a Date variable given as a number, saying what it got', async () => {
        const { status, body } = await ask(
          'query ($from: Date) { metric(name: etf_aum_change_pct, from: $from) { name } }',
          { from: 123 },
        );

        expect(status).toBe(400);
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(body.errors?.[0]?.message).toMatch(/Date expects a real calendar date as YYYY-MM-DD, got 123$/);
      });

      it('refuses an empty projects list', async () => {
        const { body } = await ask('{ metric(name: token_price_usd, projects: []) { name } }');

        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      });

      it("refuses a variable holding a value outside an enum as the client's error, not a server fault", async () => {
        const { status, body } = await ask(
          'query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) { name } }',
          { p: ['nope'] },
        );

        expect(status).toBe(400);
        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(body.errors?.[0]?.message).toContain('nope');
      });
    });

    describe('the same numbers as REST', () => {
      it.each(CATALOG.metrics.map((m) => [m.name, m] as const))(
        'returns the dates and values REST returns for %s',
        async (name, metric) => {
          const slugs = metric.projects.slice(0, 3);
          const fromRest = await rest(name, { project: slugs.join(','), start_date: RANGE.from, end_date: RANGE.to });

          const { body } = await ask<{ metric: { series: SeriesBody[] } }>(
            `query ($name: MetricName!, $projects: [Project!], $from: Date, $to: Date) ` +
              `{
            metric(name: $name, projects: $projects, from: $from, to: ` +
              `$to) { series { slug points { date value extra } } }
          }`,
            { name: enumName(name), projects: slugs.map(enumName), ...RANGE },
          );

          expect(body.errors).toBeUndefined();
          const series = body.data!.metric.series;
          expect(series.map((s) => s.slug)).toEqual(slugs);
          expect(Object.keys(fromRest)).toEqual(slugs);
          expect(Object.values(fromRest).flat().length).toBeGreaterThan(0);
          for (const s of series) {
            const expected = fromRest[s.slug]!.map(({ date, value, ...extra }) => ({
              date,
              value,
              extra: Object.keys(extra).length > 0 ? extra : null,
            }));
            expect(s.points).toEqual(expected);
          }
          if (name === 'etf-num-products')
            expect(series.flatMap((s) => s.points).every((p) => p.extra !== null)).toBe(true);
        },
      );

      it('gives firstDate and lastDate as the first and last day of the whole stored series', async () => {
        const slugs = metricDef('etf-num-products').projects.slice(0, 3);
        const whole = await rest('etf-num-products', { project: slugs.join(',') });

        const { body } = await ask<{ metric: { series: SeriesBody[] } }>(
          `{ metric(name: etf_num_products, projects: [${slugs.map(enumName).join(', ')}], ` +
            `from: "${RANGE.from}", to: "${RANGE.to}") {
            series { slug firstDate lastDate }
          } }`,
        );

        expect(body.data!.metric.series).toEqual(
          slugs.map((slug) => ({ slug, firstDate: whole[slug]![0]!.date, lastDate: whole[slug]!.at(-1)!.date })),
        );
      });
    });

    describe('authentication', () => {
      const typoQuery = JSON.stringify({ query: '{ metrcs { name } }' });

      it.each([
        ['no key', null],
        ['an empty key', ''],
        ['a wrong key', 'not-the-key'],
      ] as const)(
        'answers %s with a 401 GraphQL error (UNAUTHENTICATED) and no data, before the document is parsed',
        async (_label, key) => {
          for (const accept of [undefined, 'application/graphql-response+json']) {
            const headers = { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) };
            const res = await service.get('/graphql', { method: 'POST', key, headers, body: typoQuery });
            const text = await res.text();

            expect(res.status).toBe(401);
            expect(res.headers.get('content-type')).toBe(`${accept ?? 'application/json'}; charset=utf-8`);
            expect(res.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key"');
            const body = JSON.parse(text) as { errors: { message: string; extensions: { code: string } }[] };
            expect(body).not.toHaveProperty('data');
            expect(body.errors).toHaveLength(1);
            expect(body.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
            expect(body.errors[0]!.message).toMatch(/x-api-key header (is missing|does not hold a valid key)/);
            expect(text).not.toMatch(/did you mean/i);
          }
        },
      );

      it('does not count a key sent in the query string or a cookie', async () => {
        const inQuery = await service.get(`/graphql?x-api-key=${TEST_KEY}`, {
          method: 'POST',
          key: null,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ metrics { name } }' }),
        });
        const inCookie = await service.get('/graphql', {
          method: 'POST',
          key: null,
          headers: { 'content-type': 'application/json', cookie: `x-api-key=${TEST_KEY}` },
          body: JSON.stringify({ query: '{ metrics { name } }' }),
        });

        expect([inQuery.status, inCookie.status]).toEqual([401, 401]);
        expect([await inQuery.text(), await inCookie.text()].join()).not.toContain('"data"');
      });

      it('answers a GET query without a key with 401', async () => {
        const res = await service.get(`/graphql?query=${encodeURIComponent('{ metrics { name } }')}`, { key: null });

        expect(res.status).toBe(401);
      });
    });

    describe('GraphQL over HTTP', () => {
      it(
        "serves GraphiQL's page and /docs with a Content-Security-Policy that " + 'no other site may frame them under',
        async () => {
          // GraphiQL keeps the key its user typed in the browser: a page framing it could make that user run queries.
          const page = await service.get('/graphql', { key: null, headers: { accept: 'text/html' } });
          expect(page.status).toBe(200);
          expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
          const docs = await service.get('/docs', { key: null });
          expect(docs.status).toBe(200);
          // The page holds no script: none may run in it.
          expect(docs.headers.get('content-security-policy')).toBe(
            "default-src 'none'; style-src 'unsafe-inline'; base-uri " +
              "'none'; form-action 'none'; frame-ancestors 'none'",
          );
        },
      );

      it(
        "sends GraphiQL's page compressed when accepted, with a validator a browser " + 'revalidates to a bodiless 304',
        async () => {
          const plain = await service.get('/graphql', { key: null, headers: { accept: 'text/html' } });
          const html = await plain.text();
          expect(html).toContain('<title>');
          expect(plain.headers.get('content-encoding')).toBeNull();
          expect(plain.headers.get('cache-control')).toBe('no-cache');
          for (const encoding of ['br', 'gzip']) {
            const packed = await service.get('/graphql', {
              key: null,
              headers: { accept: 'text/html', 'accept-encoding': encoding },
            });
            expect(packed.headers.get('content-encoding')).toBe(encoding);
            // The page is a few kilobytes; graphiql-page.test.ts holds a whole first visit, the editor's files
            // included, to a third.
            expect(Number(packed.headers.get('content-length'))).toBeLessThan(html.length);
            expect(packed.headers.get('etag')).toBe(plain.headers.get('etag'));
            expect(await packed.text()).toBe(html);
          }
          const again = await service.get('/graphql', {
            key: null,
            headers: { accept: 'text/html', 'if-none-match': plain.headers.get('etag')! },
          });
          expect(again.status).toBe(304);
          expect(await again.text()).toBe('');
        },
      );

      it(
        'opens a shared GraphiQL link (a GET with ?query= from a browser) as the ' +
          'page with that query, without a key, not as a 401',
        async () => {
          const query = '{ metrics { name } }';
          const link = await service.get(`/graphql?query=${encodeURIComponent(query)}`, {
            key: null,
            headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
          });
          expect(link.status).toBe(200);
          expect(link.headers.get('content-type')).toMatch(/^text\/html/);
          expect(await link.text()).toContain('<title>');
          // A client asking for JSON still runs the query, with its key.
          const api = await service.get(`/graphql?query=${encodeURIComponent(query)}`, {
            headers: { accept: 'application/graphql-response+json' },
          });
          expect(api.status).toBe(200);
          expect(((await api.json()) as GraphqlBody).data).toMatchObject({ metrics: expect.any(Array) });
        },
      );

      it('refuses a Host header that holds no host with a 400, for the page and the API alike', async () => {
        // The request's URL is built from it: an invalid one was an unexpected error (500), logged as one.
        for (const host of ['a b', '[', 'x/y?z']) {
          const page = await service.get('/graphql', { key: null, headers: { host, accept: 'text/html' } });
          expect(page.status, host).toBe(400);
          expect(((await page.json()) as GraphqlBody).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
          const api = await service.get('/graphql', {
            method: 'POST',
            headers: { host, 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ metrics { name } }' }),
          });
          expect(api.status, host).toBe(400);
          expect(((await api.json()) as GraphqlBody).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        }
        expect(service.logs.filter((l) => l.level === 50)).toEqual([]);
      });

      it('runs a query sent with GET', async () => {
        const res = await service.get(`/graphql?query=${encodeURIComponent('{ metrics { name } }')}`, {
          headers: { accept: 'application/json' },
        });
        const body = (await res.json()) as GraphqlBody<{ metrics: { name: string }[] }>;

        expect(res.status).toBe(200);
        expect(body.data!.metrics.map((m) => m.name)).toEqual(
          [...CATALOG.metrics, ...CATALOG.derived].map((m) => m.name),
        );
      });

      it('answers a HEAD with a query as its GET, without the body', async () => {
        const path = `/graphql?query=${encodeURIComponent('{ metrics { name } }')}`;
        const get = await service.get(path, { headers: { accept: 'application/json' } });
        const getBody = await get.text();
        const head = await service.get(path, { method: 'HEAD', headers: { accept: 'application/json' } });
        expect(head.status).toBe(200);
        expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
        expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)));
        expect(await head.text()).toBe('');
        // Still an API call: a key is needed, and errors keep their status.
        const keyless = await service.get(path, { method: 'HEAD', key: null, headers: { accept: 'application/json' } });
        expect(keyless.status).toBe(401);
        const mutation = await service.get(`/graphql?query=${encodeURIComponent('mutation { __typename }')}`, {
          method: 'HEAD',
        });
        expect(mutation.status).toBe(405);
        expect(await mutation.text()).toBe('');
      });

      it('runs the operation named of a document of two queries, whichever of them ran first', async () => {
        const query = 'query Names { metrics { name } } query Type { __typename }';
        const run = async (operationName: string) => {
          const res = await service.get('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query, operationName }),
          });
          return ((await res.json()) as GraphqlBody).data;
        };
        expect(await run('Names')).toMatchObject({ metrics: expect.any(Array) });
        expect(await run('Type')).toEqual({ __typename: 'Query' });
      });

      it('refuses an empty mutation and one of a field the schema does not have', async () => {
        const empty = await ask('mutation {}');
        const unknown = await ask('mutation { dropEverything }');

        expect(empty.status).toBe(400);
        expect(empty.body.data ?? null).toBeNull();
        expect(unknown.status).toBe(400);
        expect(unknown.body.data ?? null).toBeNull();
        expect(unknown.body.errors?.[0]).toMatchObject({
          message: expect.stringContaining('dropEverything'),
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        });
      });

      it('answers with application/graphql-response+json when the client accepts it', async () => {
        const res = await service.graphql('{ metrics { name } }');

        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
      });

      it('answers a syntax error with 400 and GRAPHQL_PARSE_FAILED', async () => {
        const { status, body } = await ask('{ metrics { name ');

        expect(status).toBe(400);
        expect(body.errors?.[0]?.message).toMatch(/syntax error/i);
        expect(body.errors?.[0]?.extensions).toEqual({ code: 'GRAPHQL_PARSE_FAILED' });
      });

      it(
        'refuses a body type it cannot read with a 415 GraphQL error (UNSUPPORTED_MEDIA_TYPE) ' +
          'naming the type sent and the one expected',
        async () => {
          for (const accept of ['application/json', 'application/graphql-response+json']) {
            const res = await service.get('/graphql', {
              method: 'POST',
              headers: { 'content-type': 'text/plain', accept },
              body: '{"query":"{ __typename }"}',
            });

            const message = await expectRequestError(res, 415, accept, 'UNSUPPORTED_MEDIA_TYPE');
            expect(message).toContain('text/plain');
            expect(message).toContain('application/json');
          }
          const untyped = await service.get('/graphql', { method: 'POST', body: '{"query":"{ __typename }"}' });
          expect(await expectRequestError(untyped, 415, 'application/json', 'UNSUPPORTED_MEDIA_TYPE')).toContain(
            'no content-type',
          );
        },
      );

      it(
        'refuses an Accept it cannot meet with a 406 GraphQL error (NOT_ACCEPTABLE) ' +
          'in application/json, naming what it can send',
        async () => {
          const post = await service.get('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'text/html' },
            body: '{"query":"{ __typename }"}',
          });
          const get = await service.get(`/graphql?query=${encodeURIComponent('{ __typename }')}`, {
            headers: { accept: 'text/plain' },
          });

          expect(await expectRequestError(post, 406, 'application/json', 'NOT_ACCEPTABLE')).toMatch(
            /application\/graphql-response\+json.*text\/html/,
          );
          expect(await expectRequestError(get, 406, 'application/json', 'NOT_ACCEPTABLE')).toContain('text/plain');
        },
      );

      it(
        'answers a method other than GET and POST, and a mutation sent with GET, ' +
          'with a 405 GraphQL error (METHOD_NOT_ALLOWED) naming the methods allowed',
        async () => {
          for (const accept of ['application/json', 'application/graphql-response+json']) {
            const put = await service.get('/graphql', { method: 'PUT', headers: { accept } });

            await expectRequestError(put, 405, accept, 'METHOD_NOT_ALLOWED');
            expect(put.headers.get('allow')).toBe('GET, POST');
          }
          const mutation = await service.get(`/graphql?query=${encodeURIComponent('mutation { __typename }')}`);

          expect(await expectRequestError(mutation, 405, 'application/json', 'METHOD_NOT_ALLOWED')).toMatch(
            /mutation.*POST/,
          );
          expect(mutation.headers.get('allow')).toBe('POST');
        },
      );

      it.each([
        ['a body that is not JSON', '{"query":'],
        ['a batched (array) body', '[{"query":"{ __typename }"}]'],
        ['a body without a query', '{}'],
        ['a query that is not a string', '{"query":1}'],
        ['an operation name the document does not have', '{"query":"{ __typename }","operationName":"Other"}'],
      ])(
        'refuses %s with a 400 GraphQL error (BAD_USER_INPUT) to every client, and nothing of the error behind it',
        async (_label, body) => {
          for (const accept of ['application/json', 'application/graphql-response+json']) {
            const res = await service.get('/graphql', {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept },
              body,
            });

            // expectRequestError holds extensions to the code alone: no originalError, no SyntaxError's name or
            // message.
            await expectRequestError(res, 400, accept, 'BAD_USER_INPUT');
          }
        },
      );

      it('refuses a batched (array) body with a 4xx', async () => {
        const res = await service.get('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify([{ query: '{ metrics { name } }' }, { query: '{ metrics { name } }' }]),
        });
        const text = await res.text();

        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(text).not.toContain('"data"');
      });
    });

    describe('requests sent again', () => {
      const SERIES =
        'metric(name: token_price_usd, projects: [ethereum, solana], from: "2026-06-01", ' +
        'to: "2026-06-05") { series { slug points { date value } } }';
      const WITH_VARIABLES =
        'query Q($projects: [Project!], $from: Date) { metric(name: token_price_usd, ' +
        'projects: $projects, from: $from, to: "2026-06-05") { series { slug points ' +
        '{ date value } } } }';
      const TWO_OPERATIONS = `query A { ${SERIES} } query B { metrics { name } }`;
      interface Repeat {
        name: string;
        fields: { query: string; variables?: unknown; operationName?: unknown };
        /** Sent between the first and the second time: another request of the same document. */
        between: { variables?: unknown; operationName?: unknown };
        path?: string;
        accept?: string;
      }
      const repeats: Repeat[] = [
        {
          name: 'the other operation of the same document',
          fields: { query: TWO_OPERATIONS, operationName: 'A' },
          between: { operationName: 'B' },
        },
        { name: 'no operation named, of two', fields: { query: TWO_OPERATIONS }, between: { operationName: 'A' } },
        {
          name: 'an operation name the document lacks',
          fields: { query: TWO_OPERATIONS, operationName: 'C' },
          between: { operationName: 'A' },
        },
        {
          name: 'an empty operation name',
          fields: { query: `{ ${SERIES} }`, operationName: '' },
          between: { operationName: null },
        },
        {
          name: 'other variables',
          fields: { query: WITH_VARIABLES, variables: { projects: ['ethereum'] } },
          between: { variables: { projects: ['solana'] } },
        },
        {
          name: 'variables of the wrong type',
          fields: { query: WITH_VARIABLES, variables: { projects: 'nope', from: 7 } },
          between: { variables: {} },
        },
        {
          name: 'a URL ending in /health',
          fields: { query: `{ ${SERIES} }` },
          between: {},
          path: '/graphql?next=/health',
        },
        {
          name: 'an event stream accepted',
          fields: { query: `{ ${SERIES} }` },
          between: {},
          accept: 'text/event-stream',
        },
      ];
      /** Status, headers but the request id and date, and body: what a client sees. */
      const seen = async (res: Response) => ({
        status: res.status,
        headers: [...res.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date'),
        body: await res.text(),
      });

      it.each(repeats.map((r, i) => ({ ...r, i })))('answers $name as it did the first time', async (r) => {
        // A document of the case's own (a comment differs), so no earlier request sent it.
        const query = `${r.fields.query}\n# repeat ${r.i}`;
        const post = (fields: object, path = r.path ?? '/graphql') =>
          service.get(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: r.accept ?? 'application/graphql-response+json' },
            body: JSON.stringify({ ...r.fields, query, ...fields }),
          });
        const first = await seen(await post({}));
        await (await post(r.between, '/graphql')).text();
        expect(await seen(await post({}))).toEqual(first);
      });

      it('answers a name and a query that run together as another pair does as the query they are', async () => {
        // A document whose comment holds a NUL, and a request whose name ends where that
        // document's text did: run together, the two pairs are the same characters.
        const query = '{ metrics { name } } # a NUL in the name';
        const head = `query A { ${SERIES} } #`;
        const post = (body: string) =>
          service.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const request = JSON.stringify({ query, operationName: `A\u0000${head}` });
        const first = await seen(await post(request));
        await (await post(JSON.stringify({ query: `${head}\u0000${query}`, operationName: 'A' }))).text();
        expect(await seen(await post(request))).toEqual(first);
        expect(first.status).toBe(400);
      });

      it(
        'refuses a query the key cannot pay for with a field error, its code, ' +
          'status and Retry-After, repeated or new',
        async () => {
          const other = 'test-key-other-0123456789abcdef';
          const limited = await startTestService(kind, {
            API_KEYS: `${TEST_KEY},${other}`,
            RESPONSE_CACHE_MB: '0',
            RATE_LIMIT_PER_MINUTE: '1',
            RATE_LIMIT_BURST: '5',
          });
          try {
            const post = (query: string, key: string) => limited.graphql(query, undefined, key);
            // Four units (four projects, a year each) of the burst's five: the second request is
            // refused by the series field's charge, inside its execution.
            const query =
              '{ metric(name: token_price_usd, projects: [arbitrum, ethereum, fogo, ' +
              'solana], from: "2025-07-01", to: "2026-06-30") { series { slug } } }';
            expect((await post(query, TEST_KEY)).status).toBe(200);
            const repeat = await post(query, TEST_KEY);
            expect((await post(`${query} # 1`, other)).status).toBe(200);
            const fresh = await post(`${query} # 2`, other);
            expect(repeat.status).toBe(429);
            expect(fresh.status).toBe(429);
            expect(repeat.headers.get('content-type')).toBe(fresh.headers.get('content-type'));
            expect(Number(repeat.headers.get('retry-after'))).toBeGreaterThan(200);
            expect(
              Math.abs(Number(repeat.headers.get('retry-after')) - Number(fresh.headers.get('retry-after'))),
            ).toBeLessThanOrEqual(1);
            const body = JSON.parse(await repeat.text()) as {
              data: unknown;
              errors: { extensions: { code: string } }[];
            };
            expect(body).toEqual(JSON.parse(await fresh.text()));
            expect(body.data).toEqual({ metric: null });
            expect(body.errors[0]!.extensions.code).toBe('RATE_LIMITED');
          } finally {
            await limited.stop();
          }
        },
      );
    });

    describe('errors the client did not cause', () => {
      const pointsQuery =
        '{ metric(name: token_price_usd, projects: [ethereum]) { series { points { date value } } } }';

      it('masks an unexpected store error: no SQL, table name or stack reaches the client', async () => {
        probe.failPointReadsWith(new Error('relation "secret_table" does not exist at SELECT * FROM point'));
        const res = await service.graphql(pointsQuery);
        const text = await res.text();
        const body = JSON.parse(text) as GraphqlBody;

        expect(body.errors?.[0]).toMatchObject({
          message: 'Unexpected error.',
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        });
        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(text).not.toContain('secret_table');
        expect(text).not.toContain('SELECT');
        expect(text).not.toContain('at ');
      });

      it('answers an unreachable database with SERVICE_UNAVAILABLE and no data', async () => {
        probe.failPointReadsWith(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
        const res = await service.graphql(pointsQuery);
        const body = (await res.json()) as GraphqlBody;

        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(body.data ?? { metric: null }).toEqual({ metric: null });
        expect(body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
        expect(JSON.stringify(body)).not.toContain('ECONNREFUSED');
      });
    });

    describe("points spliced from PostgreSQL's JSON", () => {
      const args = 'name: etf_num_products, projects: [blackrock, fidelity], from: "2026-03-01", to: "2026-04-30"';
      const cases = [
        ['date value', ''],
        ['value date', ''],
        ['date value count extra', ''],
        ['extra count', ', interval: WEEK'],
        ['date value count', ', interval: MONTH, fill: NULL, transform: PERCENT_CHANGE'],
      ] as const;

      it.each(cases)(
        'answers points { %s }%s exactly as resolving every point would, from ' +
          'a statement that writes just those fields',
        async (fields, options) => {
          const spliced = await service.graphql(
            `{ metric(${args}${options}) { name series { slug points { ${fields} } } } }`,
          );
          const text = await spliced.text();
          const [statement] = probe.pointStatements();
          // Each selected field is written by PostgreSQL, in the order asked; nothing else is.
          const written = [...statement!.matchAll(/'"(date|value|count|extra)":/g)].map((m) => m[1]);
          expect(written).toEqual(fields.split(' '));
          probe.reset();
          // An inline fragment makes the same selection go through graphql's execution, point by point.
          const resolved = await service.graphql(
            `{ metric(${args}${options}) { name series { slug points { ... on DataPoint { ${fields} } } } } }`,
          );
          expect(probe.pointStatements()[0]).toMatch(/'"date":"' .*'"value":' .*'"count":' .*'"extra":'/s);
          const [a, b] = [JSON.parse(text), await resolved.json()];
          expect(a).toEqual(b);
          expect(Object.keys(a.data.metric.series[0].points[0])).toEqual(fields.split(' '));
        },
      );

      it(
        "answers a query asked as an event stream or multipart with the JSON answer's " + 'data, every byte counted',
        async () => {
          const query = `{ metric(${args}) { series { slug points { date value } } } }`;
          const post = (accept: string) =>
            service.get('/graphql', {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept },
              body: JSON.stringify({ query }),
            });
          const json = await (await post('application/json')).text();
          expect(json).toMatch(/"points":\[\{"date":"2026-03-01","value":/);
          const events = await (await post('text/event-stream')).text();
          expect(events).toContain(`\nevent: next\ndata: ${json}\n\n`);
          const multipart = await post('multipart/mixed');
          const part = /\r\nContent-Length: (\d+)\r\n\r\n([^\r]*)\r\n/.exec(await multipart.text());
          expect(part?.[2]).toBe(json);
          expect(Number(part?.[1])).toBe(Buffer.byteLength(json));
        },
      );

      it(
        'falls back to resolving points for aliases, __typename and repeated fields, ' + 'with the same answer',
        async () => {
          for (const selection of ['d: date value', '__typename date', 'date date value']) {
            const res = await service.graphql(`{ metric(${args}) { series { points { ${selection} } } } }`);
            const body = (await res.json()) as {
              data: { metric: { series: { points: Record<string, unknown>[] }[] } };
            };
            expect(body.data.metric.series[0]!.points.length).toBeGreaterThan(50);
          }
          const aliased = (await (
            await service.graphql(`{ metric(${args}) { series { points { d: date v: value } } } }`)
          ).json()) as { data: { metric: { series: { points: { d: string; v: number }[] }[] } } };
          const plain = (await (
            await service.graphql(`{ metric(${args}) { series { points { date value } } } }`)
          ).json()) as { data: { metric: { series: { points: { date: string; value: number }[] }[] } } };
          expect(aliased.data.metric.series[1]!.points).toEqual(
            plain.data.metric.series[1]!.points.map((p) => ({ d: p.date, v: p.value })),
          );
        },
      );

      it.each([
        [
          'etf-aum-change-pct',
          ['0.1234567890123456789', '-98765.4321098765432109876', '0.0000001', '123456789012345678901234.5'],
          null,
        ],
        [
          'etf-num-products',
          ['9007199254740993', '12345678901234567890'],
          '{"spot": 9007199254740993, "futures": 12345678901234567890, "leveraged": 3}',
        ],
      ] as const)(
        "writes %s's numbers as REST does, digit for digit, whether its points are spliced or resolved one by one",
        async (metric, values, extra) => {
          const slug = 'blackrock';
          const range = { start_date: '2026-03-01', end_date: '2026-03-31' };
          const days = (await rest(metric, { project: slug, ...range }))
            [slug]!.map((p) => p.date)
            .slice(0, values.length);
          const projectId = service.running.services.state.directory!.idOf(metric, slug)!;
          await heard(service, () =>
            upsertPoints(
              service.running.services.store,
              values.map((value, i) => ({ projectId, day: days[i]!, value, extra })),
            ),
          );

          for (const [options, restOptions] of [
            ['', {}],
            [', interval: WEEK, aggregation: AVG', { interval: 'week', aggregation: 'avg' }],
          ] as const) {
            const restText = await (
              await service.get(
                `/v1/metrics/${metric}?${new URLSearchParams({ project: slug, ...range, ...restOptions })}`,
              )
            ).text();
            const args =
              `name: ${enumName(metric)}, projects: [${slug}], from: "${range.start_date}", ` +
              `to: "${range.end_date}"${options}`;
            const spliced = await (
              await service.graphql(`{ metric(${args}) { series { points { date value extra } } } }`)
            ).text();
            const resolved = await (
              await service.graphql(`{ metric(${args}) { series { points { __typename date value extra } } } }`)
            ).text();

            const fromRest = numberTexts(restText);
            expect(fromRest.length).toBeGreaterThan(values.length);
            expect(numberTexts(spliced)).toEqual(fromRest);
            expect(numberTexts(resolved)).toEqual(fromRest);
          }
          const stored = numberTexts(
            await (
              await service.graphql(
                `{ metric(name: ${enumName(metric)}, projects: [${slug}], from: "${days[0]}", ` +
                  `to: "${days.at(-1)}") { series { points { __typename value } } } }`,
              )
            ).text(),
          );
          expect(stored.filter((_, i) => i < values.length)).toEqual(values);
        },
      );

      it('leaves a series whose metric field failed as null, not spliced into an error', async () => {
        const res = await service.graphql(
          `{ ok: metric(${args}) { series { points { date } } } bad: metric(name: ` +
            `price) { series { points { date } } } }`,
        );
        const body = (await res.json()) as { data: { ok: unknown; bad: unknown }; errors: unknown[] };
        expect(body.data.bad).toBeNull();
        expect(body.errors).toHaveLength(1);
        expect((body.data.ok as { series: { points: unknown[] }[] }).series[0]!.points.length).toBeGreaterThan(50);
      });
    });

    describe('batching', () => {
      const slugs = metricDef('etf-aum-change-pct').projects;
      const list = (from: number) =>
        slugs
          .slice(from, from + 20)
          .map(enumName)
          .join(', ');
      const seriesFields = (coverage: boolean) =>
        `series { slug ${coverage ? 'firstDate' : ''} points { date value } }`;
      /** Three aliases × 20 projects over two distinct (metric, from, to). */
      const threeAliases = (coverage: boolean) =>
        `{
        a: metric(name: etf_aum_change_pct, projects: [${list(0)}], from: ` +
        `"2026-01-01", to: "2026-01-31") { ${seriesFields(coverage)} }
        b: metric(name: etf_aum_change_pct, projects: [${list(20)}], ` +
        `from: "2026-01-01", to: "2026-01-31") { ${seriesFields(coverage)} }
        c: metric(name: etf_aum_change_pct, projects: [${list(0)}], from: ` +
        `"2026-03-01", to: "2026-03-31") { ${seriesFields(coverage)} }
      }`;
      type ThreeAliases = Record<'a' | 'b' | 'c', { series: SeriesBody[] }>;

      it('sends one statement per distinct (metric, from, to), however many aliases and projects ask', async () => {
        const { body } = await ask<ThreeAliases>(threeAliases(false));

        expect(body.errors).toBeUndefined();
        expect(['a', 'b', 'c'].map((alias) => body.data![alias as 'a'].series.length)).toEqual([20, 20, 20]);
        expect(probe.pointReads()).toBe(2);
      });

      it(
        'sends one statement per distinct options as well: equal options share ' + 'it, other options get their own',
        async () => {
          const monthly = 'from: "2026-01-01", to: "2026-06-30", interval: MONTH, transform: CHANGE';
          const { body } = await ask<Record<'a' | 'b' | 'c' | 'd', { series: SeriesBody[] }>>(
            `{
          a: metric(name: etf_aum_change_pct, projects: [${list(0)}], ${monthly}) ` +
              `{ series { slug points { date value } } }
          b: metric(name: etf_aum_change_pct, projects: [${list(20)}], ${monthly}) ` +
              `{ series { slug points { date value } } }
          c: metric(name: etf_aum_change_pct, projects: [${list(0)}], ` +
              `from: "2026-01-01", to: "2026-06-30", interval: WEEK) { series { slug ` +
              `points { date value } } }
          d: metric(name: etf_aum_change_pct, projects: [${list(0)}], ${monthly}, ` +
              `fill: ZERO) { series { slug points { date value } } }
        }`,
          );

          expect(body.errors).toBeUndefined();
          expect(body.data!.a.series[0]!.points.map((p) => p.date)).toEqual([
            '2026-01-01',
            '2026-02-01',
            '2026-03-01',
            '2026-04-01',
            '2026-05-01',
            '2026-06-01',
          ]);
          expect(probe.pointReads()).toBe(3);
        },
      );

      it('answers firstDate for every series of a request with one more statement', async () => {
        const { body } = await ask<ThreeAliases>(threeAliases(true));

        expect(body.errors).toBeUndefined();
        expect(body.data!.c.series.every((s) => s.firstDate !== null)).toBe(true);
        expect(probe.pointReads()).toBe(3);
      });

      it('batched answers hold the same points as separate REST requests', async () => {
        const { body } = await ask<ThreeAliases>(threeAliases(true));
        const january = await rest('etf-aum-change-pct', {
          project: slugs.slice(20, 40).join(','),
          start_date: '2026-01-01',
          end_date: '2026-01-31',
        });
        const march = await rest('etf-aum-change-pct', {
          project: slugs.slice(0, 20).join(','),
          start_date: '2026-03-01',
          end_date: '2026-03-31',
        });

        expect(body.data!.b.series.map((s) => [s.slug, s.points])).toEqual(Object.entries(january));
        expect(body.data!.c.series.map((s) => [s.slug, s.points])).toEqual(Object.entries(march));
      });

      it('gives each request its own loaders: statements are sent again and a changed value is seen', async () => {
        const first = await ask<ThreeAliases>(threeAliases(true));
        expect(probe.pointReads()).toBe(3);
        const changed = first.body.data!.a.series[0]!;
        const day = changed.points[0]!.date;
        expect(changed.points[0]!.value).not.toBe(12.5);
        const projectId = service.running.services.state.directory!.idOf('etf-aum-change-pct', changed.slug)!;
        await heard(service, () =>
          upsertPoints(service.running.services.store, [{ projectId, day, value: '12.5', extra: null }]),
        );
        probe.reset();

        const second = await ask<ThreeAliases>(threeAliases(true));

        expect(probe.pointReads()).toBe(3);
        expect(second.body.data!.a.series[0]!.points[0]).toEqual({ date: day, value: 12.5 });
        expect(second.body.data!.a.series[0]!.points.slice(1)).toEqual(changed.points.slice(1));
      });
    });
  });
}

// Private

/** The whitespace-separated words of a description, so `slug: base` does not match `base-x`. */
function words(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/);
}

/** Every number after a value or extra field's name in a JSON answer, as written: `["12.5", "3", …]`, in order. */
function numberTexts(json: string): string[] {
  return [...json.matchAll(/"(?:value|spot|futures|leveraged)":\s*(-?[0-9][0-9.eE+-]*)/g)].map((m) => m[1]!);
}

/** True for SQL that reads the `point` table (series and coverage alike). */
function readsPoints(sql: string): boolean {
  return /\bfrom point\b/.test(sql);
}

/**
 * A store wrapper that passes every call through, records the text of each statement, and
 * can be told to make reads of the `point` table fail with a given error.
 */
function createStoreProbe() {
  const statements: string[] = [];
  let failure: Error | undefined;
  return {
    wrap(store: Store): Store {
      return {
        kind: store.kind,
        description: store.description,
        query: <Row extends object>(
          text: string,
          params?: readonly unknown[],
          signal?: AbortSignal,
        ): Promise<Row[]> => {
          statements.push(text);
          if (failure !== undefined && readsPoints(text)) return Promise.reject(failure);
          return store.query<Row>(text, params, signal);
        },
        copyCsv: (table, columns, csv) => store.copyCsv(table, columns, csv),
        listen: (channel, onMessage, onListening) => store.listen(channel, onMessage, onListening),
        streamRaw: (text: string, params: readonly unknown[], batchRows: number) => {
          statements.push(text);
          const error = failure;
          if (error !== undefined && readsPoints(text)) {
            return (async function* () {
              throw error;
            })();
          }
          return store.streamRaw(text, params, batchRows);
        },
        queryRaw: (text: string, params: readonly unknown[], signal?: AbortSignal) => {
          statements.push(text);
          if (failure !== undefined && readsPoints(text)) return Promise.reject(failure);
          return store.queryRaw(text, params, signal);
        },
        exec: (script) => store.exec(script),
        transaction: (work) => store.transaction(work),
        close: () => store.close(),
      };
    },
    /** Statements sent since the last reset that read the `point` table (series and coverage). */
    pointReads: () => statements.filter(readsPoints).length,
    /** The texts of the statements that read points, in the order sent. */
    pointStatements: () => statements.filter(readsPoints),
    failPointReadsWith(error: Error) {
      failure = error;
    },
    reset() {
      statements.length = 0;
      failure = undefined;
    },
  };
}

describe('GraphQL with GRAPHIQL=off', () => {
  it("answers a browser's GET as an API call: a key is needed, with ?query= as without", async () => {
    const service = await startTestService(STORE_KINDS[0]!, { GRAPHIQL: 'off' });
    try {
      for (const path of ['/graphql', `/graphql?query=${encodeURIComponent('{ metrics { name } }')}`]) {
        const res = await service.get(path, { key: null, headers: { accept: 'text/html,*/*;q=0.8' } });
        expect(res.status, path).toBe(401);
        expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
          'UNAUTHENTICATED',
        );
      }
    } finally {
      await service.stop();
    }
  });
});
