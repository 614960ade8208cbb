import {
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { validateRankRequest } from '../analytics/rank-request.js';
import { validateTotalRequest } from '../analytics/total-request.js';
import { issuesError } from '../api/api-error.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { changesCost } from '../changes/changes-request.js';
import { todayEpochDay } from '../dates.js';
import { priceRanking, priceTotal } from '../limits/analytics-cost.js';
import { priceProfile, priceTriangleRead, priceVintageHistory } from '../limits/history-cost.js';
import { validateLookbackDays } from '../revisions/profile-request.js';
import { triangleDays, validateTriangleRequest } from '../revisions/triangle-request.js';
import { wholeSeries } from '../series/series-plan.js';
import { RANK_ARGS, TOTAL_ARGS } from './analytics-args.js';
import { collect, fragmentsOf, pathsTo, type ExecutionInput, type Walk } from './answer-size.js';
import type { GraphqlContext } from './builder.js';
import { CHANGES_ARGS } from './changes.js';
import { priceSeries, type PricedSeries } from './charge-series.js';
import type { formulaArgsSchema, FormulaArgs } from './formula.js';
import type { GraphqlServices } from './graphql-services.js';
import type { metricArgsSchema, MetricArgs } from './metric.js';

/** The services pricing reads: the catalog, stored spans and clock, and the store for the counts a price needs. */
export type PricingServices = Pick<GraphqlServices, 'catalog' | 'storedSpans' | 'clock' | 'reads' | 'revisionProfiles'>;

/** The argument schemas of the fields validated by them, built once per schema. */
export interface PricingSchemas {
  metric: ReturnType<typeof metricArgsSchema>;
  formula: ReturnType<typeof formulaArgsSchema>;
}

/**
 * What an operation would be charged, in units, from its document alone, as its resolvers
 * charge while they run: `metric` and `formula` their series once per `series { points }`
 * path under them (at least once; charge-series.ts, series.ts), a `metric` vintage adding
 * its history rows per read (counted, as the resolver counts them); the catalog's
 * `coverage` each series' whole history per `points` path and `revisionProfile` each
 * metric's profile per selection; `total`, `rank` and `revisions` as their resolvers
 * price them (a triangle counting its history rows); `changes` a unit per 1,000 entries;
 * every other field nothing; and never less than the one unit every request pays.
 * Arguments are validated as the fields validate them: one the field would refuse throws
 * that field's error. A subscription or mutation costs its one unit.
 */
export async function priceDocument(
  services: PricingServices,
  schemas: PricingSchemas,
  args: ExecutionInput,
  ctx: Pick<GraphqlContext, 'directory' | 'signal'>,
): Promise<number> {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'query') return 1;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  if (coerced.errors !== undefined) throw coerced.errors[0]!;
  const walk: Walk = { variables: coerced.coerced, fragments: fragmentsOf(args.document) };
  const fields = args.schema.getQueryType()!.getFields();
  const today = todayEpochDay(services.clock());
  const spans = (metric: string, slugs: readonly string[]) =>
    slugs.map((slug) => services.storedSpans.of(metric, slug));
  let units = 0;
  for (const nodes of collect(walk, [operation.selectionSet]).values()) {
    const node = nodes[0]!;
    const field = fields[node.name.value];
    if (field === undefined) continue;
    const values = getArgumentValues(field, node, walk.variables);
    const reads = () => Math.max(1, pathsTo(walk, nodes, ['series', 'points']));
    switch (node.name.value) {
      case 'metric': {
        const parsed = schemas.metric.safeParse(values as MetricArgs);
        if (!parsed.success) throw issuesError(parsed.error.issues);
        units += reads() * (await priceSeriesRead(services, parsed.data.request, ctx));
        break;
      }
      case 'formula': {
        const parsed = schemas.formula.safeParse(values as unknown as FormulaArgs);
        if (!parsed.success) throw issuesError(parsed.error.issues);
        units += reads() * priceSeries(services, parsed.data.request).cost;
        break;
      }
      case 'metrics': {
        const coverageReads = pathsTo(walk, nodes, ['coverage', 'points']);
        if (coverageReads > 0) units += coverageReads * wholeHistories(services);
        units += profiles(services, walk, nodes, args.schema);
        break;
      }
      case 'changes': {
        const parsed = CHANGES_ARGS.safeParse(values);
        if (!parsed.success) throw issuesError(parsed.error.issues);
        units += changesCost(parsed.data.request);
        break;
      }
      case 'total': {
        const request = validateTotalRequest(services.catalog, analyticsInput(services, values), TOTAL_ARGS);
        units += priceTotal(request, today, spans(request.series.metric.name, request.series.slugs)).cost;
        break;
      }
      case 'rank': {
        const request = validateRankRequest(services.catalog, analyticsInput(services, values), RANK_ARGS);
        units += priceRanking(request, today, spans(request.series.metric.name, request.series.slugs)).cost;
        break;
      }
      case 'revisions': {
        const { project, from, to, lags } = values as { project: string; from: string; to: string; lags: number[] };
        const request = validateTriangleRequest({
          metric: services.catalog.metric(values.name as string),
          project,
          from,
          to,
          lags,
        });
        const projectId = ctx.directory.idOf(request.metric.name, request.slug) ?? -1;
        units += await priceTriangleRead(services.reads, request, triangleDays(request), projectId, ctx.signal);
        break;
      }
    }
  }
  return Math.max(1, units);
}

// Private

/** One read of a series (charge-series.ts): its days, plus its history rows for a vintage other than latest. */
async function priceSeriesRead(
  services: PricingServices,
  request: PricedSeries & Parameters<typeof priceVintageHistory>[1],
  ctx: Pick<GraphqlContext, 'directory' | 'signal'>,
): Promise<number> {
  const history = await priceVintageHistory(services.reads, request, ctx.directory, ctx.signal);
  return priceSeries(services, request).cost + history;
}

/** What `coverage { points }` costs once: every series of the catalog, each priced alone over its whole history. */
function wholeHistories(services: PricingServices): number {
  let units = 0;
  for (const metric of everyMetric(services))
    for (const slug of metric.projects) units += priceSeries(services, wholeSeries(metric, [slug])).cost;
  return units;
}

/** What the `revisionProfile` selections under `metrics` cost: each metric's profile once per selection. */
function profiles(services: PricingServices, walk: Walk, nodes: readonly FieldNode[], schema: GraphQLSchema): number {
  const field = (schema.getType('MetricInfo') as GraphQLObjectType | undefined)?.getFields().revisionProfile;
  if (field === undefined) return 0;
  const sets = nodes.flatMap((node) => (node.selectionSet === undefined ? [] : [node.selectionSet]));
  let units = 0;
  for (const children of collect(walk, sets).values()) {
    if (children[0]!.name.value !== 'revisionProfile') continue;
    const values = getArgumentValues(field, children[0]!, walk.variables) as { lookbackDays?: number | null };
    const lookbackDays = validateLookbackDays(values.lookbackDays, 'lookbackDays');
    for (const metric of everyMetric(services)) {
      const kept = services.revisionProfiles.isKept(metric.name, lookbackDays);
      units += priceProfile(metric.projects.length, lookbackDays, kept);
    }
  }
  return units;
}

/** The metrics the `metrics` field lists: the stored ones, then the derived ones. */
function everyMetric({ catalog }: PricingServices): readonly MetricDefinition[] {
  return [...catalog.metrics, ...catalog.derived];
}

/** A `total` or `rank` field's arguments as its resolver hands them to validation (null as absent). */
function analyticsInput<T>({ catalog }: PricingServices, values: Record<string, unknown>): T {
  const given = Object.entries(values).flatMap(([name, value]) =>
    name === 'name' || value === null || value === undefined ? [] : [[name, value]],
  );
  return { ...Object.fromEntries(given), metric: catalog.metric(values.name as string) } as T;
}
