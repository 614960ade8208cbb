import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { estimateAnswerBytes } from '../src/graphql/answer-size.js';
import { metricArgsSchema } from '../src/graphql/metric.js';
import { createGraphqlSchema } from '../src/graphql/schema.js';
import { GRAPHQL_ANSWER_BUDGET_BYTES } from '../src/limits/answer-budget.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const ISSUERS = CATALOG.byName
  .get('etf-num-products')!
  .projects.map((s) => s.replaceAll('-', '_'))
  .join(', ');

/** `n` aliases of every issuer's whole `etf_num_products` history: about 11 MB each by the estimate. */
const issuerAliases = (n: number): string => {
  const alias = (i: number) =>
    `a${i}: metric(name: etf_num_products, projects: [${ISSUERS}]) { series { points { date value } } }`;
  return `{ ${Array.from({ length: n }, (_, i) => alias(i)).join(' ')} }`;
};

/** Every issuer's points selected twice in one series: two reads, one request. */
const TWICE = '{ metric(name: etf_aum_change_pct) { series { slug points { date } p2: points { value } } } }';

const SMALL = `{ metric(name: token_price_usd, projects: [solana], from: "2026-06-01") {
  series { points { date value } } } }`;

/** Generous: a hang is what is tested, not speed. */
const PATIENCE_MS = 20_000;

interface Outcome {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`no GraphQL request stalls another for the answer budget (${kind.name})`, () => {
    let service: TestService;
    beforeAll(async () => {
      // No response cache: every request must build its answer.
      service = await startTestService(kind, { RESPONSE_CACHE_MB: '0' });
    }, 120_000);
    afterAll(async () => service?.stop());

    /** A GraphQL POST over a real socket, given up after {@link PATIENCE_MS}. */
    const ask = async (query: string, accept = 'application/graphql-response+json'): Promise<Outcome> => {
      const res = await service.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query }),
        signal: AbortSignal.timeout(PATIENCE_MS),
      });
      return { status: res.status, body: (await res.json()) as Outcome['body'] };
    };

    const expectAnswered = (outcome: Outcome, keys: string[]) => {
      expect(outcome.status).toBe(200);
      expect(outcome.body.errors).toBeUndefined();
      expect(Object.keys(outcome.body.data ?? {})).toEqual(keys);
    };

    it('refuses at once a request over the whole budget, and answers a large and a small one beside it', async () => {
      const hostile = ask(issuerAliases(4));
      // The hostile one first in line, as when it stalled every later large answer.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [refused, large, small] = await Promise.all([hostile, ask(issuerAliases(3)), ask(SMALL)]);

      expect(refused.status).toBe(413);
      expect(refused.body.data ?? null).toBeNull();
      expect(refused.body.errors).toEqual([
        {
          message: expect.stringMatching(/^the answer's points are estimated at 43 MB, over the limit of 32 MB/),
          extensions: { code: 'PAYLOAD_TOO_LARGE' },
        },
      ]);
      expectAnswered(large, ['a0', 'a1', 'a2']);
      expectAnswered(small, ['metric']);
      expect(service.running.services.answerBudget.inUse).toBe(0);
      expect(service.running.services.answerBudget.waiting).toBe(0);
    }, 60_000);

    it('answers that refusal with 200 to an application/json client, as every refusal of a document', async () => {
      const refused = await ask(issuerAliases(4), 'application/json');

      expect(refused.status).toBe(200);
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('answers requests that each read their points twice, side by side, though together they exceed it', async () => {
      // Each reserves about 22 MB: one runs, the others wait for it, none waits on itself.
      const outcomes = await Promise.all([ask(TWICE), ask(TWICE), ask(TWICE)]);

      for (const outcome of outcomes) {
        expectAnswered(outcome, ['metric']);
        const series = (outcome.body.data!.metric as { series: { points: unknown[]; p2: unknown[] }[] }).series;
        expect(series).toHaveLength(76);
        expect(series.every((s) => s.points.length > 0 && s.p2.length === s.points.length)).toBe(true);
      }
      expect(service.running.services.answerBudget.inUse).toBe(0);
    }, 60_000);

    it('still answers every large request after the refusals', async () => {
      expectAnswered(await ask(issuerAliases(3)), ['a0', 'a1', 'a2']);
    }, 30_000);
  });
}

describe('the estimate of an answer before it runs', () => {
  let service: TestService;
  const schema = createGraphqlSchema(CATALOG);
  const metricArgs = metricArgsSchema(CATALOG);
  const estimate = (query: string, variableValues: Record<string, unknown> = {}) =>
    estimateAnswerBytes(service.running.services, metricArgs, { schema, document: parse(query), variableValues });

  beforeAll(async () => {
    service = await startTestService(STORE_KINDS[0]!);
  }, 120_000);
  afterAll(async () => service?.stop());

  it('counts every points path: aliases, fragments and repeated series, as the resolvers charge them', () => {
    const one = estimate(issuerAliases(1));
    expect(one).toBeGreaterThan(10 * 2 ** 20);
    expect(estimate(issuerAliases(4))).toBe(4 * one);
    expect(estimate(issuerAliases(4))).toBeGreaterThan(GRAPHQL_ANSWER_BUDGET_BYTES);
    const viaFragments = `{ a: metric(name: etf_num_products, projects: [${ISSUERS}]) { ...S s2: series { ...P } } }
      fragment S on Metric { series { ...P p2: points { value } } } fragment P on Series { points { date } }`;
    expect(estimate(viaFragments)).toBe(3 * one);
  });

  it('leaves out what @skip and @include drop, and fields that read no points', () => {
    const one = estimate(issuerAliases(1));
    const query = `query ($on: Boolean!) { a: metric(name: etf_num_products, projects: [${ISSUERS}]) {
      series { points @include(if: $on) { date } p2: points @skip(if: true) { date } } } }`;
    expect(estimate(query, { on: true })).toBe(one);
    expect(estimate(query, { on: false })).toBe(0);
    const issuers = `metric(name: etf_num_products, projects: [${ISSUERS}])`;
    expect(estimate(`{ ${issuers} { series { slug firstDate } } }`)).toBe(0);
  });

  it('counts arguments that do not validate as nothing: such a field reads no points', () => {
    const issuers = (range: string) => `metric(name: etf_num_products, projects: [${ISSUERS}], ${range})`;
    expect(estimate(`{ ${issuers('from: "2026-02-30"')} { series { points { date } } } }`)).toBe(0);
    expect(estimate(`{ ${issuers('from: "2026-06-01", to: "2026-01-01"')} { series { points { date } } } }`)).toBe(0);
    expect(estimate('{ metric(name: etf_num_products) { series { points { date } } } }')).toBe(0);
  });
});
