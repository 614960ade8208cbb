import { getArgumentValues, getOperationAST, getVariableValues } from 'graphql';
import { issuesError } from '../api/api-error.js';
import { changesCost } from '../changes/changes-request.js';
import { wholeSeries } from '../series/series-plan.js';
import { collect, fragmentsOf, pathsTo, type ExecutionInput, type Walk } from './answer-size.js';
import { CHANGES_ARGS } from './changes.js';
import { priceSeries } from './charge-series.js';
import type { GraphqlServices } from './graphql-services.js';
import type { metricArgsSchema, MetricArgs } from './metric.js';

/**
 * What an operation would be charged, in units, from its document alone, as its resolvers
 * charge while they run (charge-series.ts, series.ts, changes.ts): a `metric` field its
 * series once per `series { points }` path under it (at least once), the catalog's
 * `coverage` each series' whole history per `points` path, `changes` a unit per 1,000
 * entries, and never less than the one unit every request pays. Arguments are validated
 * as the fields validate them: one the field would refuse throws that field's error.
 * A subscription costs its one unit.
 */
export function priceDocument(
  services: Pick<GraphqlServices, 'catalog' | 'storedSpans' | 'clock'>,
  metricArgs: ReturnType<typeof metricArgsSchema>,
  args: ExecutionInput,
): number {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'query') return 1;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  if (coerced.errors !== undefined) throw coerced.errors[0]!;
  const walk: Walk = { variables: coerced.coerced, fragments: fragmentsOf(args.document) };
  const fields = args.schema.getQueryType()!.getFields();
  let units = 0;
  for (const nodes of collect(walk, [operation.selectionSet]).values()) {
    const node = nodes[0]!;
    const field = fields[node.name.value];
    if (field === undefined) continue;
    if (node.name.value === 'metric') {
      const parsed = metricArgs.safeParse(getArgumentValues(field, node, walk.variables) as MetricArgs);
      if (!parsed.success) throw issuesError(parsed.error.issues);
      const reads = Math.max(1, pathsTo(walk, nodes, ['series', 'points']));
      units += reads * priceSeries(services, parsed.data.request).cost;
    } else if (node.name.value === 'metrics') {
      const reads = pathsTo(walk, nodes, ['coverage', 'points']);
      if (reads > 0) units += reads * wholeHistories(services);
    } else if (node.name.value === 'changes') {
      const parsed = CHANGES_ARGS.safeParse(getArgumentValues(field, node, walk.variables));
      if (!parsed.success) throw issuesError(parsed.error.issues);
      units += changesCost(parsed.data.request);
    }
  }
  return Math.max(1, units);
}

// Private

/** What `coverage { points }` costs once: every series of the catalog, each priced alone over its whole history. */
function wholeHistories(services: Pick<GraphqlServices, 'catalog' | 'storedSpans' | 'clock'>): number {
  let units = 0;
  for (const metric of services.catalog.metrics)
    for (const slug of metric.projects) units += priceSeries(services, wholeSeries(metric, [slug])).cost;
  return units;
}
