import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import raw from '../src/catalog/catalog.json' with { type: 'json' };
import { CATALOG, parseCatalog } from '../src/catalog/load-catalog.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Every metric's unit, methodology, tags and update schedule: declared in the catalog for all
 * 24, checked when the catalog is parsed, and served unchanged by REST /v1/metrics, GraphQL
 * `metrics` and /docs.
 */

const UNITS = new Set(['USD', 'BTC', 'count', 'percent', 'ratio', 'native token']);

const copy = (): { metrics: Record<string, unknown>[] } => structuredClone(raw) as never;

describe('the catalog declares', () => {
  it('a unit, methodology, tags, expectedBy and stabilizationDays for every one of the 24 metrics', () => {
    expect(CATALOG.metrics).toHaveLength(24);
    for (const m of CATALOG.metrics) {
      expect(UNITS, m.name).toContain(m.unit);
      expect(m.methodology.length, m.name).toBeGreaterThanOrEqual(20);
      expect(m.tags.length, m.name).toBeGreaterThan(0);
      expect(m.expectedBy, m.name).toMatch(/^([01]\d|2[0-3]):[0-5]\d$/);
      expect(Number.isInteger(m.stabilizationDays) && m.stabilizationDays >= 0, m.name).toBe(true);
    }
    // A few by hand: what each is measured in, and which are restated.
    expect(CATALOG.metric('etf-flows-btc')).toMatchObject({ unit: 'BTC', stabilizationDays: 1 });
    expect(CATALOG.metric('transaction-fail-total')).toMatchObject({ unit: 'count', stabilizationDays: 0 });
    expect(CATALOG.metric('transaction-base-fee-total-usd')).toMatchObject({ unit: 'USD', stabilizationDays: 7 });
    expect(CATALOG.metric('outstanding-mnav').unit).toBe('ratio');
    expect(CATALOG.metric('staking-apy').unit).toBe('percent');
    expect(CATALOG.metric('priority-fees').unit).toBe('native token');
  });

  it('refuses a metric without them, or with a schedule that is not a time of day', () => {
    for (const field of ['unit', 'methodology', 'tags', 'expectedBy', 'stabilizationDays']) {
      const doc = copy();
      delete doc.metrics[3]![field];
      expect(() => parseCatalog(doc), field).toThrow(new RegExp(field));
    }
    for (const bad of ['24:00', '2:00', '02:60', 'noon']) {
      const doc = copy();
      doc.metrics[0]!.expectedBy = bad;
      expect(() => parseCatalog(doc), bad).toThrow(/expectedBy/);
    }
    const doc = copy();
    doc.metrics[0]!.stabilizationDays = 1.5;
    expect(() => parseCatalog(doc)).toThrow(/stabilizationDays/);
  });
});

describe.skipIf(!STORE_KINDS[0]!.available)('the catalog as served', { timeout: 60_000 }, () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(STORE_KINDS[0]!);
  });
  afterAll(async () => {
    await service?.stop();
  });

  const declared = (name: string) => {
    const m = CATALOG.metric(name);
    return {
      unit: m.unit,
      methodology: m.methodology,
      tags: [...m.tags],
      expectedBy: m.expectedBy,
      stabilizationDays: m.stabilizationDays,
    };
  };

  it('in every /v1/metrics entry, after defaultAggregation and before projects', async () => {
    const body = (await (await service.get('/v1/metrics')).json()) as { metrics: Record<string, unknown>[] };
    // The stored metrics in catalog order, then the derived ones (each with its formula and inputs).
    expect(body.metrics.map((m) => m.name)).toEqual([...CATALOG.served.keys()]);
    for (const entry of body.metrics.slice(0, CATALOG.metrics.length)) {
      expect(entry, String(entry.name)).toMatchObject(declared(String(entry.name)));
      expect(Object.keys(entry)).toEqual([
        'name',
        'path',
        'valueKind',
        'projectRequired',
        'defaultAggregation',
        'unit',
        'methodology',
        'tags',
        'expectedBy',
        'stabilizationDays',
        'projects',
      ]);
    }
  });

  it('in GraphQL metrics', async () => {
    const res = await service.graphql('{ metrics { name unit methodology tags expectedBy stabilizationDays } }');
    const body = (await res.json()) as { data: { metrics: ({ name: string } & Record<string, unknown>)[] } };
    for (const { name, ...rest } of body.data.metrics) expect(rest, name).toEqual(declared(name));
  });

  it('on /docs, each metric with its unit, schedule and methodology', async () => {
    const page = await (await service.get('/docs', { key: null })).text();
    for (const m of CATALOG.metrics) {
      const escaped = m.methodology.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
      expect(page, m.name).toContain(`in ${m.unit}; lands by ${m.expectedBy} UTC the next day`);
      expect(page, m.name).toContain(escaped);
    }
  });
});
