import type { Catalog } from '../catalog/load-catalog.js';
import {
  catalogOperation,
  changesOperation,
  exportOperation,
  metricOperation,
  usageOperation,
} from './openapi-operations.js';
import { hookPaths } from './openapi-hooks.js';
import { profileOperation, revisionsOperation } from './openapi-revisions.js';
import { groupsOperation, rankOperation, totalOperation } from './openapi-analytics.js';
import { formulaOperation } from './openapi-formula.js';
import { OPENAPI_COMPONENTS } from './openapi-schemas.js';

/**
 * The OpenAPI 3.1 description of the REST API, generated from the catalog: the contract's
 * one path per metric (its slugs as an enum) with the optional extension parameters, the
 * catalog, the export, and every error response.
 */
export function createOpenApiDocument(catalog: Catalog): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Metrics time-series API',
      version: '1.0.0',
      description:
        'Daily metric time series per project. Every request needs the `x-api-key` ' +
        'header. Dates are `YYYY-MM-DD`, both bounds inclusive; points are ascending ' +
        'by date. Parameters marked "Extension" are optional additions to the contract: ' +
        'a request without them is answered exactly as the contract says.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    paths: {
      '/v1/metrics': { get: catalogOperation() },
      ...Object.fromEntries(
        [...catalog.served.values()].map((m) => [`/v1/metrics/${m.name}`, { get: metricOperation(m) }]),
      ),
      '/v1/export': { get: exportOperation(catalog) },
      '/v1/changes': { get: changesOperation(catalog) },
      '/v1/usage': { get: usageOperation() },
      ...hookPaths(catalog),
      '/v1/revisions/{name}': { get: revisionsOperation(catalog) },
      '/v1/metrics/{name}/profile': { get: profileOperation(catalog) },
      '/v1/groups': { get: groupsOperation(catalog) },
      '/v1/totals/{name}': { get: totalOperation(catalog) },
      '/v1/rank/{name}': { get: rankOperation(catalog) },
      '/v1/formula': { get: formulaOperation(catalog) },
    },
    components: OPENAPI_COMPONENTS,
  };
}
