import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyDirectory } from '../src/api/unavailable.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { LIMIT_ERROR_CODE } from '../src/graphql/armor.js';
import { GRAPHQL_LIMITS } from '../src/limits/graphql-limits.js';
import { exampleQuery } from '../src/graphql/example-query.js';
import { createGraphqlServer } from '../src/graphql/yoga.js';
import { MAX_BODY_BYTES } from '../src/http/fetch-bridge.js';
import { enumName } from './support/graphql-names.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { UNLIMITED_METER } from '../src/limits/rate-limiter.js';

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** What GraphiQL sends with its JSON POSTs. */
const GRAPHIQL_ACCEPT = 'application/graphql-response+json, application/json, multipart/mixed';

/** `n` aliased selections of one cheap field. */
const aliases = (n: number): string =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: metrics { name }`).join(' ')} }`;

/** A document of exactly `n` tokens (commas are not tokens): one project named again and again. */
const tokens = (n: number): string =>
  `{ metric(name: token_price_usd, projects: [${'solana, '.repeat(n - 15)}]) { name } }`;

/** `n` directives, each on its own repetition of one field (graphql forbids repeating one on a field). */
const directives = (n: number): string => `{ metrics { ${'name @include(if: true) '.repeat(n)}} }`;

/** Selections `depth` levels deep, through `__type` (the data fields nest only four). */
const deep = (depth: number): string =>
  `{ __type(name: "Query") { fields { type ${'{ ofType '.repeat(depth - 4)}{ name }${' }'.repeat(depth - 4)} } } }`;

/** Three aliases × 20 projects with coverage and every point field: a large but ordinary request. */
const bigOrdinaryQuery = (): string => {
  const slugs = CATALOG.byName.get('etf-aum-change-pct')!.projects.map(enumName);
  const alias = (name: string, from: number, month: string) =>
    `${name}: metric(name: etf_aum_change_pct, projects: [${slugs.slice(from, from + 20).join(', ')}` +
    `], from: "2026-${month}-01", to: "2026-${month}-28") {
      series { slug firstDate lastDate points { date value extra } }
    }`;
  return `{ ${alias('a', 0, '01')} ${alias('b', 20, '01')} ${alias('c', 40, '02')} }`;
};

/** Few tokens, little depth, no more than 15 aliases: fragments spread again and again make it dear. */
const COSTLY_QUERY =
  `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: metric(name: token_price_usd) { series { ...S ...S ...S } }`).join(' ')}` +
  ` }
fragment S on Series { firstDate lastDate points { ...P ...P ...P ...P ` +
  `} }
fragment P on DataPoint { date value extra }`;

/**
 * What an answer to a hostile document may take: a bound on runaway work, far above its time on a
 * loaded machine (speed is measured by the bench). The error counts and sizes checked beside it
 * are what keep the work small.
 */
const PROMPTLY_MS = 10_000;

/** The documents behind the 10,000-brace attacks: unbalanced opens, and a field nested 10,000 deep. */
const BRACES = '{'.repeat(10_000);
const NESTED = `${'{ a '.repeat(10_000)}${'}'.repeat(10_000)}`;

// The limits act before any resolver runs, so one store shows them; the other adds only start-up time.
const pglite = STORE_KINDS.find((k) => k.name === 'pglite')!;

describe('GraphQL document limits', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(pglite);
    await service.running.ready;
  });

  afterAll(async () => {
    await service?.stop();
  });

  const ask = async (query: string, init: { accept?: string; variables?: Record<string, unknown> } = {}) => {
    const started = performance.now();
    const res = await service.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: init.accept ?? 'application/graphql-response+json' },
      body: JSON.stringify({ query, variables: init.variables }),
      signal: AbortSignal.timeout(5_000),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as GraphqlBody, ms: performance.now() - started };
  };

  /** Asserts a limit's refusal: 400, no data, the limit code, and a message naming the limit and what was found. */
  const expectRefused = (answer: Awaited<ReturnType<typeof ask>>, message: RegExp) => {
    expect(answer.status).toBe(400);
    expect(answer.body.data ?? null).toBeNull();
    expect(answer.body.errors).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(message),
        extensions: { code: LIMIT_ERROR_CODE },
      }),
    );
    expect(answer.text).not.toMatch(/Syntax Error: (Query|Aliases|Directives)/);
  };

  const expectAnswered = (answer: Awaited<ReturnType<typeof ask>>) => {
    expect(answer.body.errors).toBeUndefined();
    expect(answer.status).toBe(200);
  };

  it('has the limits the decisions name', () => {
    expect(GRAPHQL_LIMITS).toEqual({ maxDepth: 6, maxAliases: 15, maxTokens: 1000, maxDirectives: 10, maxCost: 5000 });
  });

  describe('depth', () => {
    it('refuses a query seven levels deep with 400, naming the limit and the depth found', async () => {
      expectRefused(await ask(deep(7)), /^Query depth limit of 6 exceeded, found 7\.$/);
    });

    it('answers a query six levels deep', async () => {
      expectAnswered(await ask(deep(6)));
    });

    it('does not count fragments as levels, only the shape of the response', async () => {
      const answer =
        await ask(`{ ...Q } fragment Q on Query { ...T } fragment T on Query { __type(name: "Query") { ...F } }
        fragment F on __Type { fields { type { ofType { ofType { name } } } } }`);

      expectAnswered(answer);
    });
  });

  describe('aliases', () => {
    it('answers 15 aliases', async () => {
      expectAnswered(await ask(aliases(15)));
    });

    it('refuses 16 aliases with 400', async () => {
      expectRefused(await ask(aliases(16)), /^Aliases limit of 15 exceeded, found 16\.$/);
    });

    it('counts aliases of __typename like any other: 16 of them are refused, and so are 300', async () => {
      const typenames = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;

      expectAnswered(await ask(typenames(15)));
      expectRefused(await ask(typenames(16)), /^Aliases limit of 15 exceeded, found 16\.$/);
      expectRefused(await ask(typenames(300)), /^Aliases limit of 15 exceeded, found 300\.$/);
    });

    it('counts a field aliased as __typename', async () => {
      expectRefused(
        await ask(`{ __typename: metrics { name } ${aliases(15).slice(1, -1)} }`),
        /^Aliases limit of 15 exceeded, found 16\.$/,
      );
    });

    it('counts aliases inside fragments', async () => {
      expectRefused(
        await ask(`{ ...A ...B } fragment A on Query { ${aliases(8).slice(1, -1)} }
        fragment B on Query { ${aliases(8).slice(1, -1).replaceAll(/a(\d)/g, 'b$1')} }`),
        /Aliases limit of 15 exceeded, found 16/,
      );
    });
  });

  describe('tokens', () => {
    it('answers a document of 1,000 tokens', async () => {
      expectAnswered(await ask(tokens(1000)));
    });

    it('refuses a document of 1,001 tokens with 400', async () => {
      expectRefused(await ask(tokens(1001)), /^Token limit of 1000 exceeded\.$/);
    });
  });

  describe('directives', () => {
    it('answers 10 directives', async () => {
      expectAnswered(await ask(directives(10)));
    });

    it('refuses 11 directives with 400', async () => {
      expectRefused(await ask(directives(11)), /^Directives limit of 10 exceeded, found 11\.$/);
    });
  });

  describe('cost', () => {
    it('refuses a query that is shallow and short but multiplies its fields through fragments', async () => {
      expectRefused(await ask(COSTLY_QUERY), /^Query Cost limit of 5000 exceeded, found \d+(\.\d+)?\.$/);
    });

    it('answers three aliases × 20 projects with coverage and every point field', async () => {
      const answer = await ask(bigOrdinaryQuery());

      expectAnswered(answer);
      const data = answer.body.data as Record<'a' | 'b' | 'c', { series: { points: unknown[] }[] }>;
      expect([data.a, data.b, data.c].map((m) => m.series.length)).toEqual([20, 20, 20]);
      expect(data.c.series[0]!.points.length).toBe(28);
    });

    it(
      'prices a page size written in the document as one passed in a variable: ' +
        'a full changes page is no costlier than a small one',
      async () => {
        const page = (first: string) =>
          `query${first === '$first' ? '($first: Int)' : ''} { changes(since: "2026-01-01T00:00:00Z", ` +
          `first: ${first}) { changes { name slug date value updatedAt } hasNextPage ` +
          `endCursor } }`;
        for (const [first, variables] of [
          ['10000', {}],
          ['300', {}],
          ['$first', { first: 10_000 }],
        ] as const) {
          const answer = await ask(page(first), { variables });
          expectAnswered(answer);
          expect((answer.body.data as { changes: { changes: unknown[] } }).changes.changes, first).toBeInstanceOf(
            Array,
          );
        }
        // The limit still counts what a document selects, page sizes or not.
        expectRefused(
          await ask(
            COSTLY_QUERY.replace('{ a0:', '{ changes(since: "2026-01-01T00:00:00Z", first: 5) { hasNextPage } a0:'),
          ),
          /^Query Cost limit of 5000 exceeded/,
        );
      },
    );

    it('answers the query GraphiQL opens with', async () => {
      expectAnswered(await ask(exampleQuery({ from: '2026-06-01', to: '2026-06-30' }), { accept: GRAPHIQL_ACCEPT }));
    });
  });

  describe('introspection', () => {
    it("answers graphql's full introspection query, every option on", async () => {
      const query = getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      });
      const answer = await ask(query, { accept: GRAPHIQL_ACCEPT });

      expectAnswered(answer);
      const schema = answer.body.data!.__schema as { types: { name: string }[] };
      expect(schema.types.map((t) => t.name)).toEqual(expect.arrayContaining(['Query', 'Metric', 'Series', 'Project']));
    });

    it("answers graphql's default introspection query", async () => {
      expectAnswered(await ask(getIntrospectionQuery()));
    });
  });

  describe('how refusals are answered', () => {
    it("answers a limit as graphql's own validation errors: 400, and 200 to an application/json client", async () => {
      const json = await ask(aliases(16), { accept: 'application/json' });

      expect(json.status).toBe(200);
      expect(json.body.data ?? null).toBeNull();
      expect(json.body.errors?.[0]?.extensions?.code).toBe(LIMIT_ERROR_CODE);
      expectRefused(await ask(aliases(16)), /^Aliases limit of 15 exceeded, found 16\.$/);
    });

    it('answers the token limit, which stops the parser, like every other limit', async () => {
      const json = await ask(tokens(1100), { accept: 'application/json' });

      expect(json.status).toBe(200);
      const refusal = { message: 'Token limit of 1000 exceeded.', extensions: { code: LIMIT_ERROR_CODE } };
      expect(json.body.errors).toEqual([refusal]);
      expectRefused(await ask(tokens(1100)), /^Token limit of 1000 exceeded\.$/);
    });

    const introspection = '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }';
    const unknownFields = `{ ${Array.from({ length: 120 }, (_, i) => `x${i}`).join(' ')} }`;
    it.each([
      ["graphql's introspection depth", introspection, /^Maximum introspection depth exceeded$/],
      ["graphql's cap of 100 validation errors", unknownFields, /Validation aborted\.$/],
    ])('answers %s as the other limits: 400, and 200 to an application/json client', async (_label, query, message) => {
      const strict = await ask(query);
      const json = await ask(query, { accept: 'application/json' });

      expect(strict.status).toBe(400);
      expect(json.status).toBe(200);
      for (const answer of [strict, json]) {
        expect(answer.body.data ?? null).toBeNull();
        const refusal = { message: expect.stringMatching(message), extensions: { code: LIMIT_ERROR_CODE } };
        expect(answer.body.errors).toContainEqual(expect.objectContaining(refusal));
      }
    });

    it('reports every limit a document breaks at once', async () => {
      const answer = await ask(`{ ${aliases(16).slice(1, -1)} ${deep(7).slice(1, -1)} }`);

      expect(answer.status).toBe(400);
      expect(answer.body.errors?.map((e) => e.message)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Aliases limit/), expect.stringMatching(/^Query depth limit/)]),
      );
    });

    it.each([
      ['an unknown field', '{ metrik }', 'metrik'],
      ['an unknown argument', '{ metric(name: token_price_usd, projets: [solana]) { name } }', 'projets'],
      ['an unknown enum value', '{ metric(name: token_price_usd, projects: [solan]) { name } }', 'solan'],
      ['an unknown type', 'query ($p: [Projec!]) { metric(name: token_price_usd, projects: $p) { name } }', 'Projec'],
    ])('names %s without suggesting what was meant', async (_label, query, named) => {
      const answer = await ask(query);

      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.message).toContain(named);
      expect(answer.text).not.toMatch(/did you mean/i);
    });
  });

  describe('hostile bodies', () => {
    it('refuses a body over 1 MB with 413 before parsing it', async () => {
      const query = `{ metrics { name } } # ${'x'.repeat(MAX_BODY_BYTES)}`;
      const res = await service.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });

      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body).not.toHaveProperty('data');
      expect(body.errors).toEqual([
        { message: `request bodies are limited to ${MAX_BODY_BYTES} bytes`, extensions: { code: 'PAYLOAD_TOO_LARGE' } },
      ]);
    });

    it('refuses a batched (array) body with 400', async () => {
      const res = await service.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ query: '{ metrics { name } }' }, { query: '{ metrics { name } }' }]),
      });

      expect(res.status).toBe(400);
      expect(await res.text()).not.toContain('"data"');
    });

    it('refuses 70,000 unknown projects in a variable with at most 51 errors, promptly', async () => {
      const projects = Array.from({ length: 70_000 }, (_, i) => `p${i}`);
      const answer = await ask('query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) { name } }', {
        variables: { p: projects },
      });

      expect(answer.status).toBe(400);
      expect(answer.ms).toBeLessThan(PROMPTLY_MS);
      expect(answer.body.errors?.length).toBe(51);
      expect(answer.body.errors?.[0]).toMatchObject({
        message: expect.stringContaining('"p0"'),
        extensions: { code: 'BAD_USER_INPUT' },
      });
      expect(answer.body.errors?.at(-1)?.message).toMatch(/too many errors/i);
    });

    it('names only the first five of 70,000 projects the metric does not have, and counts the rest', async () => {
      const issuers = CATALOG.byName.get('etf-num-products')!.projects;
      const projects = Array.from({ length: 70_000 }, (_, i) => enumName(issuers[i % 76]!));
      const answer = await ask('query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) { name } }', {
        variables: { p: projects },
      });
      const message = answer.body.errors?.[0]?.message ?? '';

      expect(answer.body.data?.metric ?? null).toBeNull();
      expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(message).toContain('"blackrock" is not a project of token-price-usd');
      expect(message).toContain('and 71 more');
      expect(answer.text.length).toBeLessThan(4_096);
    });

    it('refuses circular fragments with 400, not a fault', async () => {
      const answer = await ask('{ ...A } fragment A on Query { metrics { name } ...B } fragment B on Query { ...A }');

      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.message).toMatch(/Cannot spread fragment "A" within itself/);
    });

    it.each([
      ['10,000 opening braces', BRACES],
      ['a field nested 10,000 deep', NESTED],
    ])('refuses %s with 400, promptly', async (_label, query) => {
      const answer = await ask(query);

      expect(answer.status).toBe(400);
      expect(answer.ms).toBeLessThan(PROMPTLY_MS);
      expect(answer.body.errors?.[0]?.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
    });
  });

  describe('cross-site requests', () => {
    /** Yoga on its own, without the router's key check (or rate limit) in front of it. */
    const yogaAlone = (request: Request) => {
      const { services } = service.running;
      return createGraphqlServer(services).fetch(request, {
        directory: readyDirectory(services.state),
        signal: new AbortController().signal,
        meter: UNLIMITED_METER,
      });
    };
    const form = () => {
      const body = new FormData();
      body.set('operations', JSON.stringify({ query: '{ __typename }' }));
      body.set('map', '{}');
      return body;
    };
    const simpleRequests: [string, () => RequestInit & { url?: string }][] = [
      ['a GET with the query in its URL', () => ({ url: '/graphql?query=%7B__typename%7D' })],
      [
        'a text/plain POST',
        () => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"query":"{ __typename }"}' }),
      ],
      ['a multipart POST', () => ({ method: 'POST', body: form() })],
      ['a form POST', () => ({ method: 'POST', body: new URLSearchParams({ query: '{ __typename }' }) })],
    ];

    it.each(simpleRequests)('refuses %s without the key at the router, with 401 and no data', async (_label, init) => {
      const { url = '/graphql', ...rest } = init();
      const res = await service.get(url, { ...rest, key: null });

      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('"data"');
    });

    it.each(simpleRequests)('has Yoga itself refuse %s carrying no custom header with 403', async (_label, init) => {
      const { url = '/graphql', ...rest } = init();
      const res = await yogaAlone(new Request(`http://localhost${url}`, rest));
      const body = (await res.json()) as GraphqlBody;

      expect(res.status).toBe(403);
      expect(body.errors?.[0]?.message).toBe('Required CSRF header(s) not present');
      expect(body.data ?? null).toBeNull();
    });

    it(
      'has Yoga accept a simple request once it carries the key header, which ' + 'no page can add without a preflight',
      async () => {
        const res = await yogaAlone(
          new Request('http://localhost/graphql?query=%7B__typename%7D', { headers: { 'x-api-key': TEST_KEY } }),
        );

        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
      },
    );

    it("answers GraphiQL's own requests: a JSON POST with the key header", async () => {
      const answer = await ask('{ __typename }', { accept: GRAPHIQL_ACCEPT });

      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: { units: 1 } } });
    });
  });
});
