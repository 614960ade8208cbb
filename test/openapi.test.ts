import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { removePoints, upsertPoints } from '../src/db/write-points.js';
import { projectId } from './support/project-id.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** The `$id` the served document is registered under, so its `#/components/...` refs resolve. */
const DOCUMENT_ID = 'https://metrics.test/openapi.json';
const START_DATE = '2026-06-01';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, { get: Operation }>;
  components: { schemas: Record<string, unknown> };
}

interface Operation {
  parameters: { name: string; in: string; required: boolean; schema: { items?: { enum?: string[] } } }[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(kind.name, () => {
    let service: TestService;
    let served: string;
    let document: OpenApiDocument;
    let ajv: Ajv2020;
    /** A validator for the schema at a JSON pointer into the served document. */
    const schemaAt = (...tokens: string[]): ValidateFunction =>
      ajv.compile({
        $ref: `${DOCUMENT_ID}#/${tokens.map((t) => t.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`,
      });

    beforeAll(async () => {
      service = await startTestService(kind);
      const res = await service.get('/v1/openapi.json');
      expect(res.status).toBe(200);
      served = await res.text();
      document = JSON.parse(served) as OpenApiDocument;
      // strictSchema off: the document carries OpenAPI keywords (openapi, paths, …) that are not JSON Schema.
      ajv = new Ajv2020({ allErrors: true, strictSchema: false });
      addFormats.default(ajv);
      ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    });

    afterAll(async () => {
      await service?.stop();
    });

    it('serves a document that a validator accepts as OpenAPI 3.1', async () => {
      const result = await new Validator().validate(JSON.parse(served) as Record<string, unknown>);

      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(document.openapi).toMatch(/^3\.1\./);
    });

    it('needs the key like every other /v1 route', async () => {
      expect((await service.get('/v1/openapi.json', { key: null })).status).toBe(401);
    });

    it('describes exactly one path per catalog metric, stored and derived, with its allowed slugs as the project enum', () => {
      const metricPaths = Object.keys(document.paths).filter((p) => /^\/v1\/metrics\/[^/{]+$/.test(p));
      expect(metricPaths.sort()).toEqual([...CATALOG.served.keys()].map((name) => `/v1/metrics/${name}`).sort());

      for (const metric of CATALOG.served.values()) {
        const project = document.paths[`/v1/metrics/${metric.name}`]!.get.parameters.find((p) => p.name === 'project');
        expect(project, metric.name).toMatchObject({ in: 'query', required: metric.projectRequired });
        expect(project!.schema.items?.enum, metric.name).toEqual(metric.projects);
      }
    });

    it('gives every metric operation a problem response for 400, 401, 404 and 503', () => {
      for (const metric of CATALOG.metrics) {
        const { responses } = document.paths[`/v1/metrics/${metric.name}`]!.get;
        for (const status of ['400', '401', '404', '503']) {
          expect(responses[status]?.content?.['application/problem+json']?.schema, `${metric.name} ${status}`).toEqual({
            $ref: '#/components/schemas/Problem',
          });
        }
      }
    });

    it('every metric answers two slugs over a range with a 200 body that matches its response schema', async () => {
      for (const metric of CATALOG.metrics) {
        const path = `/v1/metrics/${metric.name}`;
        const projects = metric.projects.slice(0, 2);
        const res = await service.get(
          `${path}?project=${projects.join(',')}&start_date=${START_DATE}&end_date=${TEST_LAST_DAY}`,
        );
        expect(res.status, metric.name).toBe(200);
        expect(res.headers.get('content-type'), metric.name).toMatch(/^application\/json/);
        const body = (await res.json()) as Record<string, unknown[]>;

        const validate = schemaAt('paths', path, 'get', 'responses', '200', 'content', 'application/json', 'schema');
        expect(validate(body) ? [] : validate.errors, metric.name).toEqual([]);
        expect(Object.keys(body), metric.name).toEqual(projects);
        expect(
          Object.values(body).every((points) => points.length > 0),
          `${metric.name} has data in range`,
        ).toBe(true);
      }
    });

    it('answers with extension parameters in bodies that match the same schemas, null values included', async () => {
      const cases = [
        ['transaction-fail-total', 'project=ethereum,base&interval=month&aggregation=sum'],
        ['etf-num-products', 'project=blackrock&interval=week'],
        // Integer metrics with decimals: an average, and a percent change.
        ['transaction-fail-total', 'project=ethereum&interval=month&aggregation=avg'],
        ['etf-num-products', 'project=blackrock&interval=month&transform=percent_change'],
        ['price', 'project=ethereum&interval=week&fill=null&transform=percent_change'],
        ['price', `project=ethereum&start_date=2020-01-01&end_date=${TEST_LAST_DAY}&interval=year&transform=change`],
      ] as const;
      for (const [metric, query] of cases) {
        const res = await service.get(`/v1/metrics/${metric}?${query}`);
        expect(res.status).toBe(200);
        const body = await res.json();
        const validate = schemaAt(
          'paths',
          `/v1/metrics/${metric}`,
          'get',
          'responses',
          '200',
          'content',
          'application/json',
          'schema',
        );
        expect(validate(body) ? [] : validate.errors, `${metric}?${query}`).toEqual([]);
      }
    });

    it('describes the changes feed: a page with writes and a removal matches its schema', async () => {
      const store = service.running.services.store;
      const id = await projectId(store, 'price', 'ethereum');
      await upsertPoints(store, [{ projectId: id, day: '2026-07-01', value: 1.5, extra: null }]);
      await removePoints(store, [{ projectId: id, day: '2026-07-01' }]);
      for (const query of ['since=2000-01-01&limit=1', 'since=2000-01-01']) {
        const res = await service.get(`/v1/changes?${query}`);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await res.json()) as { changes: unknown[] };
        expect(body.changes.length).toBeGreaterThan(0);
        const validate = schemaAt(
          'paths',
          '/v1/changes',
          'get',
          'responses',
          '200',
          'content',
          'application/json',
          'schema',
        );
        expect(validate(body) ? [] : validate.errors, query).toEqual([]);
      }
    });

    it('describes the catalog answer, the export, and every extension parameter', async () => {
      const catalog = await (await service.get('/v1/metrics')).json();
      const validate = schemaAt(
        'paths',
        '/v1/metrics',
        'get',
        'responses',
        '200',
        'content',
        'application/json',
        'schema',
      );
      expect(validate(catalog) ? [] : validate.errors).toEqual([]);
      const exportOp = document.paths['/v1/export']!.get as unknown as {
        parameters: { name?: string; $ref?: string }[];
        responses: Record<string, { content?: Record<string, unknown> }>;
      };
      expect(exportOp.parameters.filter((p) => p.name !== undefined).map((p) => p.name)).toEqual([
        'metric',
        'project',
        'format',
        'extra',
        'include',
      ]);
      expect(Object.keys(exportOp.responses['200']!.content!)).toEqual([
        'text/csv',
        'application/x-ndjson',
        'application/json',
        'application/vnd.apache.parquet',
        'application/vnd.apache.arrow.stream',
      ]);
      const metricOp = document.paths['/v1/metrics/price']!.get as unknown as {
        parameters: { name?: string; $ref?: string }[];
      };
      expect(metricOp.parameters.map((p) => p.name ?? p.$ref!.split('/').at(-1))).toEqual([
        'project',
        'StartDate',
        'EndDate',
        'Interval',
        'Aggregation',
        'Fill',
        'Transform',
        'Window',
        'AsOf',
        'DryRun',
        'Vintage',
        'LagDays',
        'LimitPerProject',
      ]);
      const parameters = (
        document.components as unknown as { parameters: Record<string, { name: string; schema: { enum?: string[] } }> }
      ).parameters;
      expect(parameters.Interval!.schema.enum).toEqual(['day', 'week', 'month', 'quarter', 'year']);
      expect(parameters.Fill!.schema.enum).toEqual(['none', 'null', 'zero', 'previous']);
    });

    it('describes a dry run and the usage answer: both match their schemas', async () => {
      const dry = await (await service.get('/v1/metrics/price?project=ethereum&dry_run=true')).json();
      const dryRun = schemaAt('components', 'schemas', 'DryRun');
      expect(dryRun(dry) ? [] : dryRun.errors).toEqual([]);
      const exportDry = await (await service.get('/v1/export?metric=price&project=ethereum&dry_run=true')).json();
      expect(dryRun(exportDry) ? [] : dryRun.errors).toEqual([]);
      const usage = await (await service.get('/v1/usage')).json();
      const validate = schemaAt(
        'paths',
        '/v1/usage',
        'get',
        'responses',
        '200',
        'content',
        'application/json',
        'schema',
      );
      expect(validate(usage) ? [] : validate.errors).toEqual([]);
      expect(validate({ ...usage, hours: usage.hours.slice(1) })).toBe(false);
    });

    it('the conformance check is not vacuous: it rejects a bad date, a string value and an unknown project', () => {
      const metric = CATALOG.metrics.find((m) => m.valueKind === 'decimal')!;
      const validate = schemaAt(
        'paths',
        `/v1/metrics/${metric.name}`,
        'get',
        'responses',
        '200',
        'content',
        'application/json',
        'schema',
      );
      const slug = metric.projects[0]!;

      expect(validate({ [slug]: [{ date: '2026-06-01', value: 1.5 }] })).toBe(true);
      expect(validate({ [slug]: [{ date: '2026-13-01', value: 1.5 }] })).toBe(false);
      expect(validate({ [slug]: [{ date: '2026-06-01', value: '1.5' }] })).toBe(false);
      expect(validate({ 'no-such-project': [] })).toBe(false);
    });

    it('error bodies match the Problem schema (400 unknown parameter, 401, 404 unknown metric, 405)', async () => {
      const metric = CATALOG.metrics[0]!;
      const path = `/v1/metrics/${metric.name}?project=${metric.projects[0]}`;
      const cases: [number, Promise<Response>][] = [
        [400, service.get(`${path}&startDate=2026-01-01`)],
        [401, service.get(path, { key: null })],
        [401, service.get(path, { key: 'not-a-key' })],
        [404, service.get('/v1/metrics/no-such-metric')],
        [405, service.get(path, { method: 'POST' })],
      ];
      const validate = schemaAt('components', 'schemas', 'Problem');

      for (const [status, pending] of cases) {
        const res = await pending;
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        const body = (await res.json()) as { status: number; errors?: { param: string }[] };
        expect(validate(body) ? [] : validate.errors, String(status)).toEqual([]);
        expect(body.status).toBe(status);
        if (status === 400) expect(body.errors?.map((e) => e.param)).toContain('startDate');
      }
    });
  });
}
