import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { projectId } from './support/project-id.js';
import { heard, startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

type Point = { date: string; value: number } & Record<string, unknown>;
type Body = Record<string, Point[]>;

const PROBLEM = 'application/problem+json';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`REST /v1/metrics on ${kind.name}`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService(kind);
    });
    afterAll(async () => svc?.stop());

    const json = async (path: string) => {
      const res = await svc.get(path);
      return { res, body: (await res.json()) as Body & Record<string, unknown> };
    };
    const expectProblem = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe(PROBLEM);
      const body = (await res.json()) as {
        type: string;
        title: string;
        status: number;
        detail: string;
        errors?: { param: string; message: string }[];
      };
      expect(body.status).toBe(status);
      expect(body.type).toMatch(/^\/docs#problem-/);
      expect(typeof body.title).toBe('string');
      expect(body.detail.length).toBeGreaterThan(0);
      return body;
    };

    it('returns one key per requested project in request order, each ascending by date', async () => {
      const { res, body } = await json(
        '/v1/metrics/token-price-usd?project=solana,arbitrum,ethereum&start_date=2026-01-01&end_date=2026-01-31',
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(Object.keys(body)).toEqual(['solana', 'arbitrum', 'ethereum']);
      for (const points of Object.values(body)) {
        const dates = points.map((p) => p.date);
        expect(dates).toEqual([...new Set(dates)].sort());
        expect(points.every((p) => Object.keys(p).join() === 'date,value' && typeof p.value === 'number')).toBe(true);
      }
    });

    it('includes both bounds', async () => {
      const { body: all } = await json('/v1/metrics/volume-usd?project=binance');
      const [first, , third] = all.binance!.slice(100, 103);
      const { body } = await json(
        `/v1/metrics/volume-usd?project=binance&start_date=${first!.date}&end_date=${third!.date}`,
      );
      expect(body.binance).toEqual(all.binance!.slice(100, 103));
      const { body: single } = await json(
        `/v1/metrics/volume-usd?project=binance&start_date=${first!.date}&end_date=${first!.date}`,
      );
      expect(single.binance).toEqual([first]);
    });

    it('defaults to the earliest and the latest stored day when bounds are omitted', async () => {
      const { body: all } = await json('/v1/metrics/price?project=ethereum');
      const stored = await svc.running.services.store.query<{ first: string; last: string; n: number }>(
        `select min(day)::text as first, max(day)::text as last, count(*)::integer ` +
          `as n from point pt
         join project p on p.id = pt.project_id join metric m on m.id ` +
          `= p.metric_id where m.name = 'price' and p.slug = 'ethereum'`,
      );
      expect(all.ethereum!.length).toBe(stored[0]!.n);
      expect(all.ethereum![0]!.date).toBe(stored[0]!.first);
      expect(all.ethereum!.at(-1)!.date).toBe(stored[0]!.last);
      const { body: fromOnly } = await json(`/v1/metrics/price?project=ethereum&start_date=${all.ethereum![10]!.date}`);
      expect(fromOnly.ethereum).toEqual(all.ethereum!.slice(10));
      const { body: toOnly } = await json(`/v1/metrics/price?project=ethereum&end_date=${all.ethereum![10]!.date}`);
      expect(toOnly.ethereum).toEqual(all.ethereum!.slice(0, 11));
    });

    it('returns every allowed slug when project is omitted on a metric that does not require it', async () => {
      const { res, body } = await json('/v1/metrics/staking-apy?start_date=2026-06-01&end_date=2026-06-02');
      expect(res.status).toBe(200);
      expect(Object.keys(body)).toEqual(CATALOG.byName.get('staking-apy')!.projects);
    });

    it.each(CATALOG.metrics.filter((m) => m.projectRequired).map((m) => m.name))(
      'requires project for %s',
      async (name) => {
        const problem = await expectProblem(await svc.get(`/v1/metrics/${name}`), 400);
        expect(problem.errors).toEqual([{ param: 'project', message: expect.stringContaining('required') }]);
        expect(problem.errors![0]!.message).toContain(CATALOG.byName.get(name)!.projects[0]!);
      },
    );

    it('serves every metric of the catalog with the right value kind', async () => {
      for (const metric of CATALOG.metrics) {
        const slugs = metric.projects.slice(0, 2);
        const { res, body } = await json(
          `/v1/metrics/${metric.name}?project=${slugs.join(',')}&start_date=2026-05-01&end_date=2026-06-30`,
        );
        expect(res.status, metric.name).toBe(200);
        expect(Object.keys(body), metric.name).toEqual(slugs);
        const points = Object.values(body).flat();
        expect(points.length, metric.name).toBeGreaterThan(0);
        if (metric.valueKind === 'integer')
          expect(
            points.every((p) => Number.isInteger(p.value)),
            metric.name,
          ).toBe(true);
        const keys = new Set(points.flatMap((p) => Object.keys(p)));
        expect([...keys].sort(), metric.name).toEqual(['date', 'value', ...metric.extraFields].sort());
      }
    });

    it('writes integer metrics as JSON integers', async () => {
      const res = await svc.get(
        '/v1/metrics/transaction-fail-total?project=ethereum&start_date=2026-06-01&end_date=2026-06-05',
      );
      const text = await res.text();
      expect(text).toMatch(/"value":\d+[,}]/);
      expect(text).not.toMatch(/"value":\d+\.\d/);
    });

    it('collapses duplicate slugs, keeping the first position', async () => {
      const { body } = await json(
        '/v1/metrics/price?project=solana,ethereum,solana&start_date=2026-06-01&end_date=2026-06-02',
      );
      expect(Object.keys(body)).toEqual(['solana', 'ethereum']);
    });

    it('returns an empty array for a project with no data in range', async () => {
      const { res, body } = await json('/v1/metrics/price?project=ethereum&start_date=2001-01-01&end_date=2001-12-31');
      expect(res.status).toBe(200);
      expect(body).toEqual({ ethereum: [] });
    });

    it('treats slugs as case-sensitive, naming the wrong one and listing the allowed ones', async () => {
      const venues = CATALOG.byName.get('volume-usd')!.projects;
      const upper = venues.find((v) => v !== v.toLowerCase())!;
      expect((await svc.get(`/v1/metrics/volume-usd?project=${upper}&start_date=2026-06-01`)).status).toBe(200);
      const problem = await expectProblem(await svc.get(`/v1/metrics/volume-usd?project=${upper.toLowerCase()}`), 400);
      expect(problem.errors![0]!.param).toBe('project');
      expect(problem.errors![0]!.message).toContain(`"${upper.toLowerCase()}"`);
      expect(problem.errors![0]!.message).toContain(venues.join(', '));
    });

    it('refuses an unknown slug, naming it and listing the allowed ones', async () => {
      const problem = await expectProblem(await svc.get('/v1/metrics/price?project=ethereum,dogecoin'), 400);
      expect(problem.errors).toEqual([{ param: 'project', message: expect.stringContaining('"dogecoin"') }]);
      expect(problem.errors![0]!.message).toContain('arbitrum, ethereum, solana');
    });

    it.each(['ethereum,,solana', 'ethereum,', ',ethereum', ''])(
      'refuses the empty segment in project=%s',
      async (value) => {
        const problem = await expectProblem(await svc.get(`/v1/metrics/price?project=${value}`), 400);
        expect(problem.errors!.some((e) => e.param === 'project' && e.message.includes('empty'))).toBe(true);
      },
    );

    it.each([
      '2024-02-30',
      '2023-02-29',
      '20240105',
      '2024-1-05',
      '+002024-01-05',
      '2024-01-05T00:00:00Z',
      'yesterday',
    ])('refuses the date %s', async (date) => {
      const problem = await expectProblem(
        await svc.get(`/v1/metrics/price?project=ethereum&start_date=${encodeURIComponent(date)}`),
        400,
      );
      expect(problem.errors).toEqual([{ param: 'start_date', message: expect.stringContaining('YYYY-MM-DD') }]);
    });

    it('accepts 29 February in a leap year', async () => {
      expect(
        (await svc.get('/v1/metrics/price?project=ethereum&start_date=2024-02-29&end_date=2024-02-29')).status,
      ).toBe(200);
    });

    it('refuses a start date after the end date', async () => {
      const problem = await expectProblem(
        await svc.get('/v1/metrics/price?project=ethereum&start_date=2026-02-02&end_date=2026-02-01'),
        400,
      );
      expect(problem.errors).toEqual([{ param: 'start_date', message: expect.stringContaining('after') }]);
    });

    it('refuses unknown parameters, naming them (a startDate typo included)', async () => {
      const problem = await expectProblem(
        await svc.get('/v1/metrics/price?project=ethereum&startDate=2026-01-01&limit=5'),
        400,
      );
      expect(problem.errors!.map((e) => e.param)).toEqual(['startDate', 'limit']);
    });

    it('refuses a repeated parameter', async () => {
      const problem = await expectProblem(await svc.get('/v1/metrics/price?project=ethereum&project=solana'), 400);
      expect(problem.errors).toEqual([{ param: 'project', message: expect.stringContaining('once') }]);
    });

    it('answers 404 for an unknown metric, after checking the key', async () => {
      await expectProblem(await svc.get('/v1/metrics/token-price'), 404);
      await expectProblem(await svc.get('/v1/metrics/Price?project=ethereum'), 404);
      await expectProblem(await svc.get('/v1/metrics/token-price', { key: null }), 401);
    });

    it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('answers %s with 405 and Allow', async (method) => {
      const res = await svc.get('/v1/metrics/price?project=ethereum', { method });
      await expectProblem(res, 405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    });

    it('answers HEAD with the GET headers and no body', async () => {
      const path = '/v1/metrics/price?project=ethereum&start_date=2026-01-01';
      const get = await svc.get(path);
      const head = await svc.get(path, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
      expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
      expect(await head.text()).toBe('');
    });

    describe('API keys', () => {
      it.each([
        ['missing', null],
        ['empty', ''],
        ['unknown', 'not-a-key'],
      ])('answers a %s key with 401 and the ApiKey challenge', async (_label, key) => {
        const res = await svc.get('/v1/metrics/price?project=ethereum', { key });
        const problem = await expectProblem(res, 401);
        expect(res.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key"');
        expect(JSON.stringify(problem)).not.toContain('ethereum');
      });

      it('checks the key before parsing anything else', async () => {
        await expectProblem(await svc.get('/v1/metrics/price?bogus=1&project=', { key: null }), 401);
        await expectProblem(await svc.get('/v1/metrics/price', { key: null, method: 'DELETE' }), 401);
      });

      it('ignores a key sent in the query string or a cookie', async () => {
        await expectProblem(
          await svc.get(`/v1/metrics/price?project=ethereum&x-api-key=${TEST_KEY}`, { key: null }),
          401,
        );
        await expectProblem(
          await svc.get('/v1/metrics/price?project=ethereum', {
            key: null,
            headers: { cookie: `x-api-key=${TEST_KEY}` },
          }),
          401,
        );
      });

      it('never writes a key into the logs', async () => {
        await svc.get('/v1/metrics/price?project=ethereum', { key: 'wrong-key-xyz' });
        await svc.get('/v1/metrics/price?project=ethereum');
        expect(svc.logText()).toContain('/v1/metrics/:name');
        expect(svc.logText()).not.toContain(TEST_KEY);
        expect(svc.logText()).not.toContain('wrong-key-xyz');
      });
    });

    describe('HTTP caching and compression', () => {
      const path = '/v1/metrics/etf-aum-change-pct?start_date=2026-01-01';

      it(
        'gives each kind of answer the caching /docs states: CACHE_MAX_AGE_SECONDS ' +
          'for series and catalog, 300 for OpenAPI, no-store for changes and export',
        async () => {
          const expected: [string, string, boolean][] = [
            [path, 'private, max-age=60', true],
            ['/v1/metrics', 'private, max-age=60', true],
            ['/v1/openapi.json', 'private, max-age=300', true],
            ['/v1/changes?since=2026-01-01', 'no-store', true],
            ['/v1/export?metric=price&project=ethereum&start_date=2026-01-01&end_date=2026-01-31', 'no-store', false],
          ];
          for (const [asked, cacheControl, etag] of expected) {
            const res = await svc.get(asked);
            expect(res.status, asked).toBe(200);
            expect(res.headers.get('cache-control'), asked).toBe(cacheControl);
            expect(res.headers.get('etag') !== null, asked).toBe(etag);
            await res.arrayBuffer();
          }
        },
      );

      it('sends an ETag and private Cache-Control, and 304 for a matching If-None-Match', async () => {
        const first = await svc.get(path);
        const etag = first.headers.get('etag')!;
        expect(etag).toMatch(/^W\/"[\w-]+"$/);
        expect(first.headers.get('cache-control')).toBe('private, max-age=60');
        const again = await svc.get(path, { headers: { 'if-none-match': etag } });
        expect(again.status).toBe(304);
        expect(await again.text()).toBe('');
        const other = await svc.get(path, { headers: { 'if-none-match': 'W/"something-else"' } });
        expect(other.status).toBe(200);
      });

      it(
        'answers If-None-Match: * with 304 for a series that exists, read or kept, ' + 'and an unknown metric with 404',
        async () => {
          // RFC 9110 §13.1.2: "*" matches any current representation; a failed condition on GET is a 304.
          const asked = '/v1/metrics/price?project=ethereum&start_date=2026-03-01&end_date=2026-03-31';
          const star = { headers: { 'if-none-match': '*' } };
          const read = await svc.get(asked, star);
          expect(read.status).toBe(304);
          expect(await read.text()).toBe('');
          expect(read.headers.get('etag')).toMatch(/^W\/"[\w-]+"$/);
          const plain = await svc.get(asked);
          expect(plain.status).toBe(200);
          expect(((await plain.json()) as Body).ethereum!.length).toBeGreaterThan(0);
          const kept = await svc.get(asked, star);
          expect(kept.status).toBe(304);
          expect(kept.headers.get('etag')).toBe(plain.headers.get('etag'));
          expect((await svc.get('/v1/metrics/nope', star)).status).toBe(404);
        },
      );

      it('gives different ETags to different bodies', async () => {
        const a = await svc.get('/v1/metrics/price?project=ethereum&start_date=2026-01-01');
        const b = await svc.get('/v1/metrics/price?project=solana&start_date=2026-01-01');
        expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
      });

      it('compresses large bodies with brotli or gzip when asked, and not small ones', async () => {
        const plain = await (await svc.get(path)).text();
        for (const encoding of ['br', 'gzip']) {
          const res = await fetch(`${svc.url}${path}`, {
            headers: { 'x-api-key': TEST_KEY, 'accept-encoding': encoding },
          });
          expect(res.headers.get('content-encoding')).toBe(encoding);
          expect(res.headers.get('vary')).toContain('Accept-Encoding');
          // fetch decodes transparently; the raw length tells that the wire bytes were compressed.
          expect(Number(res.headers.get('content-length'))).toBeLessThan(plain.length / 2);
          expect(await res.text()).toBe(plain);
        }
        const small = await fetch(`${svc.url}/v1/metrics/price?project=ethereum&start_date=2026-06-30`, {
          headers: { 'x-api-key': TEST_KEY, 'accept-encoding': 'br, gzip' },
        });
        expect(small.headers.get('content-encoding')).toBeNull();
      });
    });

    describe('large answers', () => {
      it('streams a many-project answer in request order, identical to asking project by project', async () => {
        const issuers = CATALOG.byName.get('etf-aum-change-pct')!.projects;
        const res = await svc.get('/v1/metrics/etf-aum-change-pct');
        expect(res.status).toBe(200);
        // The server store streams a few projects per round trip (chunked); PGlite answers in one piece.
        if (kind.name === 'postgres') expect(res.headers.get('content-length')).toBeNull();
        expect(res.headers.get('etag')).toMatch(/^W\/"/);
        const body = (await res.json()) as Body;
        expect(Object.keys(body)).toEqual(issuers);
        for (const slug of [issuers[0]!, issuers[37]!, issuers.at(-1)!]) {
          const { body: one } = await json(`/v1/metrics/etf-aum-change-pct?project=${slug}`);
          expect(body[slug]).toEqual(one[slug]);
        }
      });

      it('compresses a streamed answer when asked', async () => {
        const plain = await (await svc.get('/v1/metrics/etf-aum-change-pct')).text();
        const res = await svc.get('/v1/metrics/etf-aum-change-pct', { headers: { 'accept-encoding': 'gzip' } });
        expect(res.headers.get('content-encoding')).toBe('gzip');
        expect(await res.text()).toBe(plain);
      });
    });

    it('changes the ETag when the data changes, so a stale If-None-Match gets the new body', async () => {
      const path = '/v1/metrics/price?project=solana&start_date=2026-06-01&end_date=2026-06-30';
      const before = await svc.get(path);
      const etag = before.headers.get('etag')!;
      const old = (await before.json()) as Body;
      const day = old.solana![0]!.date;
      const solana = await projectId(svc.running.services.store, 'price', 'solana');
      await heard(svc, () =>
        svc.running.services.store.query('update point set value = value + 1 where day = $1 and project_id = $2', [
          day,
          solana,
        ]),
      );
      const after = await svc.get(path, { headers: { 'if-none-match': etag } });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(etag);
      const fresh = (await after.json()) as Body;
      expect(fresh.solana![0]!.value).toBeCloseTo(old.solana![0]!.value + 1, 6);
    });

    describe('the catalog listing', () => {
      it(
        'lists every metric with its value kind, required flag, default aggregation, ' +
          'slugs, date coverage and last write',
        async () => {
          const { res, body } = await json('/v1/metrics');
          expect(res.status).toBe(200);
          const metrics = body.metrics as unknown as {
            name: string;
            valueKind: string;
            projectRequired: boolean;
            defaultAggregation: string;
            projects: { slug: string; firstDate: string; lastDate: string; updatedAt: string }[];
          }[];
          expect(metrics.map((m) => m.name)).toEqual([...CATALOG.served.keys()]);
          const price = metrics.find((m) => m.name === 'price')!;
          expect(price).toMatchObject({ valueKind: 'decimal', projectRequired: true, defaultAggregation: 'avg' });
          expect(metrics.find((m) => m.name === 'volume-usd')!.defaultAggregation).toBe('sum');
          expect(metrics.find((m) => m.name === 'stablecoin-supply-total-usd')!.defaultAggregation).toBe('last');
          const res2 = await svc.get('/v1/metrics/price?project=ethereum');
          const eth = (await res2.json()) as Record<string, { date: string }[]>;
          const entry = price.projects.find((p) => p.slug === 'ethereum')!;
          expect(entry).toEqual({
            slug: 'ethereum',
            firstDate: eth.ethereum![0]!.date,
            lastDate: eth.ethereum!.at(-1)!.date,
            updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
            // At noon of the test day, price (due by 00:30 UTC the next day) should hold the day before.
            stale: eth.ethereum!.at(-1)!.date < '2026-06-29',
          });
          // The same write time a series answer states as Last-Modified (in whole seconds).
          expect(res2.headers.get('last-modified')).toBe(
            new Date(Math.floor(Date.parse(entry.updatedAt) / 1000) * 1000).toUTCString(),
          );
        },
      );

      it('takes no parameters: an unknown one is a 400 naming it, as on the series paths', async () => {
        const problem = await expectProblem(await svc.get('/v1/metrics?project=ethereum&format=csv'), 400);
        expect(problem.errors).toEqual([
          { param: 'project', message: 'unknown parameter "project"; expected none' },
          { param: 'format', message: 'unknown parameter "format"; expected none' },
        ]);
        // Without parameters, the same listing as ever.
        const plain = await svc.get('/v1/metrics');
        const bare = await svc.get('/v1/metrics?');
        expect(plain.status).toBe(200);
        expect(await bare.text()).toBe(await plain.text());
      });
    });

    describe('hygiene', () => {
      it('answers unknown paths with a 404 problem, HTML requests included', async () => {
        await expectProblem(await svc.get('/nope', { headers: { accept: 'text/html' } }), 404);
        await expectProblem(await svc.get('/v1/other'), 404);
      });

      it('sends nosniff and a request id, and no X-Powered-By', async () => {
        const res = await svc.get('/v1/metrics/price?project=ethereum&start_date=2026-06-01');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('x-powered-by')).toBeNull();
      });

      it('states on /docs, without a key, every decision the contract leaves open', async () => {
        const res = await svc.get('/docs', { key: null });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
        const html = await res.text();
        for (const decision of [
          'real days only',
          'Both bounds are inclusive',
          'earliest stored day',
          'duplicates collapsed',
          'case-sensitive',
          'unknown parameter',
          'repeated one',
          'unknown metric is a 404',
          '405',
          'If-None-Match',
          '16 KB get 431',
          '1 MB get 413',
          'WWW-Authenticate',
          'Retry-After',
          'same validation code',
          'GRAPHQL_PARSE_FAILED',
          'GRAPHQL_VALIDATION_FAILED',
        ]) {
          expect(html, decision).toContain(decision);
        }
        for (const metric of CATALOG.metrics) expect(html).toContain(`/v1/metrics/${metric.name}`);
        // A statement timeout is promised only where there is one: the embedded store runs each query to its end.
        if (kind.name === 'postgres') expect(html).toContain('(statement timeout 5 s), requests get 503');
        else expect(html).toContain('each query runs to its end, without a statement timeout');
        expect(html.includes('statement timeout 5 s')).toBe(kind.name === 'postgres');
      });

      it('reports health and readiness without a key', async () => {
        expect((await svc.get('/healthz', { key: null })).status).toBe(200);
        const ready = await svc.get('/readyz', { key: null });
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ status: 'ready', store: kind.name });
      });

      it('answers a URL over 16 KB with a 431 problem, on a real socket, before any route runs', async () => {
        const res = await svc.fetch(`/v1/metrics/token-price-usd?project=${'solana,'.repeat(3_000)}solana`);
        expect(res.status).toBe(431);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(await res.json()).toEqual({
          type: '/docs#problem-header-too-large',
          title: 'Request Header Fields Too Large',
          status: 431,
          detail: 'the request line and header fields are limited to 16384 bytes',
        });
      });

      it('answers a GraphQL URL over 16 KB with a 431 GraphQL error', async () => {
        const res = await svc.fetch(
          `/graphql?query=${encodeURIComponent(`{ metrics { name } } #${'x'.repeat(17_000)}`)}`,
        );
        expect(res.status).toBe(431);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await res.json()).toEqual({
          errors: [
            {
              message: 'the request line and header fields are limited to 16384 bytes',
              extensions: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE' },
            },
          ],
        });
      });

      it(
        'answers a request line HTTP does not allow with a 400 in the error format ' + 'of its path, on a real socket',
        async () => {
          // Full-width digits sent as raw UTF-8 bytes, not percent-encoded: Node's parser refuses the request line.
          const rest = await rawRequest(
            svc.url,
            `GET /v1/metrics/token-price-usd?project=ethereum&start_date=\uFF10\uFF12 ` +
              `HTTP/1.1\r\nhost: x\r\nx-api-key: ${TEST_KEY}\r\n\r\n`,
          );
          expect(rest.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
          expect(rest.head).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/);
          expect(rest.head).toMatch(/\r\nx-content-type-options: nosniff\r\n/);
          expect(JSON.parse(rest.body)).toEqual({
            type: '/docs#problem-bad-request',
            title: 'Bad Request',
            status: 400,
            detail:
              'the request is not valid HTTP/1.1: its request line or a header field ' +
              'holds what HTTP does not allow (URLs are percent-encoded ASCII)',
          });
          const graphql = await rawRequest(svc.url, 'GET /graphql?query={\u00e9} HTTP/1.1\r\nhost: x\r\n\r\n');
          expect(graphql.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
          expect(graphql.head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/);
          expect(JSON.parse(graphql.body)).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
          const health = await svc.get('/healthz', { key: null });
          expect(health.status).toBe(200);
        },
      );

      it('sends no CORS headers to an origin that is not configured', async () => {
        const res = await svc.get('/v1/metrics/price?project=ethereum', {
          headers: { origin: 'https://evil.example' },
        });
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
      });
    });
  });
}

/** Sends `request` as raw bytes on a new connection and reads the answer until the server closes it. */
async function rawRequest(baseUrl: string, request: string): Promise<{ head: string; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.end(Buffer.from(request, 'utf8'));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  return { head: text.slice(0, split + 2), body: text.slice(split + 4) };
}

describe('CORS for configured origins', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(STORE_KINDS[0]!, { CORS_ORIGINS: 'https://app.example' });
  });
  afterAll(async () => svc?.stop());

  it('allows exactly the configured origin and answers its preflight without a key', async () => {
    const res = await svc.get('/v1/metrics/price?project=ethereum', { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const preflight = await svc.get('/v1/metrics/price', {
      key: null,
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key',
      },
    });
    expect(preflight.status).toBe(204);
    // Every request header the API reads: a browser app may revalidate with either validator.
    expect(preflight.headers.get('access-control-allow-headers')!.split(', ').sort()).toEqual([
      'content-type',
      'if-modified-since',
      'if-none-match',
      'x-api-key',
    ]);
    const other = await svc.get('/v1/metrics/price?project=ethereum', { headers: { origin: 'https://other.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('applies the same policy to GraphQL: the configured origin only, never reflected, no credentials', async () => {
    const post = (origin: string) =>
      svc.get('/graphql', {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
    const allowed = await post('https://app.example');
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ data: { __typename: 'Query' }, extensions: { cost: { units: 1 } } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-expose-headers')).toBe(
      'ETag, Retry-After, RateLimit, RateLimit-Policy, X-Request-Id',
    );
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    const other = await post('https://other.example');
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
