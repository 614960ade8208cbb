import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { enumName } from './support/graphql-names.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Every answer must arrive within this, whatever was sent: a bound on hangs and runaway work,
 * far above an answer's time on a loaded machine (speed is measured by the bench).
 */
const DEADLINE_MS = 10_000;

/**
 * Generated runs per property and store, few enough to finish well within {@link FUZZ_MS} on a
 * loaded machine; the fixed hostile cases come on top.
 */
const RUNS = { rest: 1_000, graphql: 1_000, raw: 200 } as const;

/** How long a property may run: one that has not finished its runs by then fails. */
const FUZZ_MS = 100_000;

const METRICS = CATALOG.metrics.map((m) => m.name);
const SLUGS = [...new Set(CATALOG.metrics.flatMap((m) => m.projects))];
/**
 * Strings that commonly break parsers: impossible dates, SQL and LIKE syntax, NUL, surrogates, bidi and combining
 * marks.
 */
const HOSTILE_TEXT = [
  '2024-02-30',
  '2023-02-29',
  '2024-02-29',
  '+002024-01-05',
  '-002024-01-05',
  '20240105',
  '2024-1-5',
  '2024-13-01',
  '0000-01-01',
  '0001-01-01',
  '0099-12-31',
  '9999-12-31',
  '2024-01-05T00:00:00Z',
  ' 2024-01-05',
  '２０２４-01-05',
  '१९७०-01-01',
  "' or 1=1--",
  "'; drop table point; --",
  '" or ""="',
  "solana' --",
  '%',
  '_',
  '%%',
  'sol_na',
  'solana%',
  '\\',
  '\\x00',
  '$1',
  '\u0000',
  'solana\u0000',
  '\ud800',
  '\udfff',
  'a\udc00b',
  '\u202esolana',
  'solana\u200f',
  'e\u0301\u0301',
  'ethereum\u0301',
  '\u200b',
  '\ufeff',
  'ＳＯＬＡＮＡ',
  'SOLANA',
  '',
  ',',
  ',,',
  'solana,,ethereum',
  'solana,',
  ' solana',
  '__proto__',
  'constructor',
  'null',
  '-1',
  '1e309',
];

/** Percent-encodings that are no valid UTF-8 or no encoding at all: sent as they are. */
const RAW_ESCAPES = [
  '%E0%A4%A',
  '%zz',
  '%',
  '%ED%A0%80',
  '%C0%AF',
  '%00',
  '%FF',
  '%2',
  '%u0041',
  '%25',
  '&',
  '=',
  '==',
  '+',
  '#',
  '?',
  ';',
];

const unitChar = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.constantFrom('\ud800', '\udc00', '\u0000', '\u202e', '\u0301', '%', '_', "'", '"', ',', '-', '{', '}', '\\', '$'),
);
const text = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT, ...SLUGS, ...METRICS) },
  { weight: 2, arbitrary: fc.string({ unit: unitChar, maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom(...SLUGS, ...HOSTILE_TEXT), { maxLength: 12 }).map((a) => a.join(',')),
  },
);

/** A value as it goes into a URL: properly encoded, as is (fetch encodes what it must), or with a broken escape. */
const urlPart = fc.oneof(
  { weight: 3, arbitrary: text.map(encodeLoosely) },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom(...RAW_ESCAPES)).map(([t, e]) => `${encodeLoosely(t)}${e}`) },
);
const paramName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('project', 'start_date', 'end_date') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('startDate', 'PROJECT', 'project[]', 'x-api-key', '', 'end_date ', '__proto__'),
  },
  { weight: 1, arbitrary: urlPart },
);

/** A day inside or around the seeded year, written as the API wants it. */
const isoDay = fc
  .date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

/** Requests a client could mean: a metric, some of its projects, a range (often the wrong way round). */
const plausibleRest = fc.constantFrom(...CATALOG.metrics).chain((metric) =>
  fc.record({
    metric: fc.constant(metric.name),
    params: fc
      .tuple(
        fc.option(
          fc
            .subarray([...metric.projects], { minLength: 1 })
            .map((slugs) => ['project', slugs.join(',')] as [string, string]),
          { nil: undefined },
        ),
        fc.option(
          isoDay.map((day) => ['start_date', day] as [string, string]),
          { nil: undefined },
        ),
        fc.option(
          isoDay.map((day) => ['end_date', day] as [string, string]),
          { nil: undefined },
        ),
      )
      .map((pairs) => pairs.filter((pair) => pair !== undefined)),
  }),
);

const restRequest = fc.record({
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant('GET') },
    { weight: 1, arbitrary: fc.constantFrom('HEAD', 'POST', 'DELETE', 'OPTIONS') },
  ),
  target: fc.oneof(
    { weight: 2, arbitrary: plausibleRest },
    {
      weight: 3,
      arbitrary: fc.record({
        metric: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...METRICS) }, { weight: 1, arbitrary: urlPart }),
        params: fc.array(fc.tuple(paramName, urlPart), { maxLength: 6 }),
      }),
    },
  ),
  separator: fc.constantFrom('&', '&', '&', ';', '&&'),
});

const gqlString = text.map((t) => JSON.stringify(t));
const gqlValue = fc.oneof(
  gqlString,
  fc.constantFrom('null', 'true', '0', '-1', '1e309', '[]', '{}', '$undefinedVariable', 'solana', 'SOLANA'),
  fc
    .array(fc.constantFrom(...SLUGS.map(enumName), 'nope', '"solana"', 'null'), { maxLength: 8 })
    .map((a) => `[${a.join(', ')}]`),
);
const fieldSelection = fc.constantFrom(
  'name',
  'valueKind',
  'series { slug }',
  'series { project firstDate lastDate }',
  'series { points { date value extra } }',
  'series { points { date } __typename }',
  'nope',
  'series { nope }',
  '__typename',
  'series',
);
const metricName = fc.oneof(
  fc.constantFrom(...METRICS.map(enumName)),
  fc.constantFrom('nope', '"token-price-usd"', '1', 'null'),
);
const literalQuery = fc
  .record({
    name: metricName,
    args: fc.array(fc.tuple(fc.constantFrom('projects', 'from', 'to', 'nope'), gqlValue), { maxLength: 4 }),
    fields: fc.array(fieldSelection, { minLength: 1, maxLength: 4 }),
  })
  .map(
    ({ name, args, fields }) =>
      `{ metric(name: ${name}${args.map(([k, v]) => `, ${k}: ${v}`).join('')}) { ${fields.join(' ')} } }`,
  );

const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(fc.constantFrom(...SLUGS.map(enumName)), text), { maxLength: 20 }) },
);
const variablesQuery = fc.record({
  query: fc.constantFrom(
    'query ($name: MetricName!, $projects: [Project!], $from: Date, $to: Date) ' +
      '{ metric(name: $name, projects: $projects, from: $from, to: $to) { series ' +
      '{ slug points { date value extra } } } }',
    'query Q($projects: [Project!]) { metric(name: token_price_usd, projects: ' +
      '$projects) { series { slug firstDate lastDate } } }',
    'query ($from: Date, $to: Date) { metric(name: etf_num_products, from: ' +
      '$from, to: $to) { series { points { date extra } } } }',
  ),
  variables: fc.record(
    { name: fc.oneof(metricName, jsonish), projects: jsonish, from: jsonish, to: jsonish },
    { requiredKeys: [] },
  ),
});

/** Token soup: the grammar's pieces in any order, to reach the parser's error paths. */
const tokenSoup = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '{',
        '}',
        '(',
        ')',
        '[',
        ']',
        '...',
        'fragment',
        'F',
        'on',
        'Query',
        'query',
        'mutation',
        'subscription',
        ':',
        '$x',
        '@include(if: true)',
        '@skip',
        '!',
        '=',
        '|',
        '&',
      ),
      fc.constantFrom(
        'metric',
        'metrics',
        'series',
        'points',
        'date',
        'name: token_price_usd',
        '__schema',
        '__type',
        '__typename',
      ),
      gqlString,
    ),
    { maxLength: 40 },
  )
  .map((tokens) => tokens.join(' '));

const graphqlRequest = fc.record({
  transport: fc.oneof(
    { weight: 8, arbitrary: fc.constant('post') },
    { weight: 3, arbitrary: fc.constant('get') },
    { weight: 1, arbitrary: fc.constantFrom('application/graphql', 'text/plain', 'form') },
  ),
  operation: fc.oneof(
    { weight: 3, arbitrary: literalQuery.map((query) => ({ query, variables: undefined as unknown })) },
    { weight: 3, arbitrary: variablesQuery },
    { weight: 2, arbitrary: tokenSoup.map((query) => ({ query, variables: undefined as unknown })) },
  ),
  operationName: fc.option(fc.oneof(fc.constantFrom('Q', 'nope', ''), text), { nil: undefined }),
});

/** Bodies no client library would send. */
const rawBody = fc.oneof(
  fc.constantFrom(
    '',
    'null',
    '[]',
    '"query"',
    '{',
    '{"query": 1}',
    '{"query": null}',
    '{"query": "{ metrics { name } }", "variables": "x"}',
    '{"query": "{ metrics { name } }", "variables": [1]}',
    '{"query": "{ metrics { name } }", "operationName": {}}',
    '{"query": "{ metrics { name } }", "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "00"}}}',
    '{"query": "\\ud800"}',
    '{"query": "{ metrics { name } }\\u0000"}',
    '{"__proto__": {"query": "{ metrics { name } }"}}',
    '{"query": "{ metrics { name } }", "query": "{ __schema { types { name } } }"}',
    '\u0000',
    '\ufeff{"query": "{ metrics { name } }"}',
  ),
  fc.string({ unit: unitChar, maxLength: 60 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
);

const rawRequest = fc.record({
  body: rawBody,
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=latin1',
    'application/graphql',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    '',
  ),
});

/** The large documents of the brief, sent once each on top of the generated ones. */
const HOSTILE_OPERATIONS: [string, { query: string; variables?: Record<string, unknown> } | string][] = [
  [
    '70,000 projects in a variable',
    {
      query: 'query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) { series { slug } } }',
      variables: { p: Array.from({ length: 70_000 }, (_, i) => enumName(SLUGS[i % SLUGS.length]!)) },
    },
  ],
  [
    '70,000 copies of one project',
    {
      query:
        'query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) ' +
        '{ series { slug points { date value } } } }',
      variables: { p: Array.from({ length: 70_000 }, () => 'solana') },
    },
  ],
  [
    '70,000 unknown projects',
    {
      query: 'query ($p: [Project!]) { metric(name: token_price_usd, projects: $p) { name } }',
      variables: { p: Array.from({ length: 70_000 }, (_, i) => `p${i}`) },
    },
  ],
  // Written out by hand: JSON.stringify itself overflows the stack on 10,000 nested arrays.
  [
    'a variable nested 10,000 arrays deep',
    `{"query": "query ($p: [Project!]) { metric(name: token_price_usd, projects: ` +
      `$p) { name } }", "variables": {"p": ${'['.repeat(10_000)}${']'.repeat(10_000)}}}`,
  ],
  ['10,000 opening braces', { query: '{'.repeat(10_000) }],
  ['10,000 nested selections', { query: `${'{ a '.repeat(10_000)}${'}'.repeat(10_000)}` }],
  [
    'circular fragments',
    { query: '{ ...A } fragment A on Query { metrics { name } ...B } fragment B on Query { ...A }' },
  ],
  ['a fragment spreading itself', { query: '{ ...A } fragment A on Query { ...A }' }],
  ['5,000 aliases', { query: `{ ${Array.from({ length: 5_000 }, (_, i) => `a${i}: metrics { name }`).join(' ')} }` }],
  [
    '5,000 aliases of the whole series',
    {
      query:
        `{ ${Array.from({ length: 5_000 }, (_, i) => `a${i}: metric(name: etf_num_products) { series { points { date value extra } } }`).join(' ')}` +
        ` ` +
        `}`,
    },
  ],
  [
    '1,000 fragments each spreading the next',
    {
      query:
        `{ ...F0 } ${Array.from({ length: 1_000 }, (_, i) => `fragment F${i} on Query { metrics { name } ...F${i + 1} }`).join(' ')}` +
        ` ` +
        `fragment F1000 on Query { __typename }`,
    },
  ],
  [
    'a quarter of every project of 15 metrics',
    {
      query: `{ ${CATALOG.metrics
        .filter((m) => !m.projectRequired)
        .slice(0, 15)
        .map(
          (m, i) =>
            `m${i}: metric(name: ${enumName(m.name)}, from: "2026-01-01", to: "2026-03-31") { series { firstDate points { date value extra } } }`,
        )
        .join(' ')} }`,
    },
  ],
];

/** REST requests with long URLs: a short 4xx (node's 414 or 431 past 16 KB), never a fault, never a long answer. */
const HOSTILE_URLS: [string, string][] = [
  ['7,000 empty project names', `/v1/metrics/etf-num-products?project=${','.repeat(7_000)}`],
  [
    '1,500 projects the metric does not have',
    `/v1/metrics/token-price-usd?project=${Array.from({ length: 1_500 }, (_, i) => `p${i}`).join(',')}`,
  ],
  [
    '70,000 projects in the URL',
    `/v1/metrics/token-price-usd?project=${Array.from({ length: 70_000 }, () => 'solana').join(',')}`,
  ],
  ['a 20 KB parameter name', `/v1/metrics/token-price-usd?${'a'.repeat(20_000)}=1`],
  [
    '2,000 repeated parameters',
    `/v1/metrics/token-price-usd?${Array.from({ length: 2_000 }, () => 'project=solana').join('&')}`,
  ],
];

/** graphql's guesses at a name; its lexer's "did you mean to use a double quote" names nothing. */
const SUGGESTION = /did you mean (the enum value )?"/i;

const FIXED_REST = '/v1/metrics/token-price-usd?project=solana,ethereum&start_date=2026-03-01&end_date=2026-03-31';
const FIXED_GRAPHQL =
  '{ metric(name: etf_num_products, projects: [blackrock, fidelity], from: ' +
  '"2026-03-01", to: "2026-03-31") { name series { slug firstDate lastDate ' +
  'points { date value extra } } } }';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`fuzzing the HTTP API on ${kind.name}`, () => {
    let service: TestService;
    const stats = { requests: 0, fiveXx: 0, maxMs: 0 };
    let before: { rest: string; graphql: string };

    beforeAll(async () => {
      // The rate limit is off: thousands of requests on one key would otherwise be 429s.
      service = await startTestService(kind, { RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' });
      await service.running.ready;
      before = await fixedAnswers();
    });

    afterAll(async () => {
      console.log(
        `fuzz (${kind.name}): ${stats.requests} requests, ${stats.fiveXx} 5xx, ` +
          `max latency ${Math.round(stats.maxMs)} ms`,
      );
      await service?.stop();
    });

    /** Sends one request with the test key and checks what every answer must be: fast, not a fault, nothing leaked. */
    const send = async (path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> => {
      const headers = new Headers(init.headers);
      headers.set('x-api-key', TEST_KEY);
      const started = performance.now();
      const res = await fetch(`${service.url}${path}`, { ...init, headers, signal: AbortSignal.timeout(DEADLINE_MS) });
      const body = await res.text();
      const ms = performance.now() - started;
      stats.requests += 1;
      stats.maxMs = Math.max(stats.maxMs, ms);
      if (res.status >= 500) stats.fiveXx += 1;
      const context = `${init.method ?? 'GET'} ${path.slice(0, 200)} → ${res.status} ${body.slice(0, 300)}`;
      expect(res.status, context).toBeLessThan(500);
      expect(ms, context).toBeLessThan(DEADLINE_MS);
      expect(body, context).not.toMatch(/INTERNAL_SERVER_ERROR|Unexpected error|\bat .*\.[cm]?[jt]s:\d+/i);
      // REST's case hint ("did you mean \"MSTR\"?") is by design; GraphQL never guesses a name.
      if (path.startsWith('/graphql')) expect(body, context).not.toMatch(SUGGESTION);
      return { status: res.status, text: body };
    };

    const sendGraphql = (request: Generated<typeof graphqlRequest>) => {
      const { query, variables } = request.operation;
      const params = { query, variables, operationName: request.operationName };
      switch (request.transport) {
        case 'get':
          return send(
            `/graphql?${new URLSearchParams(Object.entries(params).flatMap(([k, v]) => (v === undefined ? [] : [[k, typeof v === 'string' ? v : JSON.stringify(v)]])))}`,
            {
              headers: { accept: 'application/graphql-response+json' },
            },
          );
        case 'application/graphql':
        case 'text/plain':
          return send('/graphql', { method: 'POST', headers: { 'content-type': request.transport }, body: query });
        case 'form':
          return send('/graphql', { method: 'POST', body: new URLSearchParams({ query }) });
        default:
          return send('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(params),
          });
      }
    };

    const fixedAnswers = async () => ({
      rest: (await send(FIXED_REST)).text,
      graphql: (
        await send('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: FIXED_GRAPHQL }),
        })
      ).text,
    });

    const fuzzOptions = { endOnFailure: true, interruptAfterTimeLimit: FUZZ_MS, markInterruptAsFailure: true } as const;

    it('answers generated REST requests promptly and never with a fault', { timeout: FUZZ_MS + 20_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(restRequest, async ({ method, target: { metric, params }, separator }) => {
          const query = params.map(([k, v]) => `${k}=${v}`).join(separator);
          await send(`/v1/metrics/${metric}${query === '' ? '' : `?${query}`}`, { method });
        }),
        { ...fuzzOptions, numRuns: RUNS.rest },
      );
    });

    it('answers generated GraphQL documents and variables promptly and never with a fault', {
      timeout: FUZZ_MS + 20_000,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(graphqlRequest, async (request) => void (await sendGraphql(request))),
        { ...fuzzOptions, numRuns: RUNS.graphql },
      );
    });

    it('answers malformed GraphQL bodies promptly and never with a fault', { timeout: FUZZ_MS + 20_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(rawRequest, async ({ body, contentType }) => {
          await send('/graphql', {
            method: 'POST',
            headers: contentType === '' ? {} : { 'content-type': contentType },
            body,
          });
        }),
        { ...fuzzOptions, numRuns: RUNS.raw },
      );
    });

    it.each(HOSTILE_OPERATIONS)('answers %s promptly and never with a fault', async (_label, operation) => {
      const { status } = await send('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: typeof operation === 'string' ? operation : JSON.stringify(operation),
      });

      expect(status).toBeLessThan(500);
    });

    it.each(HOSTILE_URLS)('answers %s with a short 4xx', async (_label, path) => {
      const { status, text } = await send(path);

      expect(status).toBeGreaterThanOrEqual(400);
      expect(text.length).toBeLessThan(16 * 1024);
    });

    it('is alive afterwards and answers the same requests with the same bytes', async () => {
      const health = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(DEADLINE_MS) });
      const after = await fixedAnswers();

      expect(health.status).toBe(200);
      expect(after).toEqual(before);
      expect(JSON.parse(after.graphql)).toMatchObject({ data: { metric: { name: 'etf-num-products' } } });
      expect(Object.keys(JSON.parse(after.rest) as object)).toEqual(['solana', 'ethereum']);
      expect(stats.requests).toBeGreaterThanOrEqual(RUNS.rest + RUNS.graphql + RUNS.raw);
      expect(stats.fiveXx).toBe(0);
      expect(service.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
    });
  });
}

// Private

type Generated<A> = A extends fc.Arbitrary<infer T> ? T : never;

/** encodeURIComponent, except that a lone surrogate (which it refuses) is left for fetch to replace. */
function encodeLoosely(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text;
  }
}
