import { z } from 'zod';
import { TOTAL_OPS } from '../../analytics/total-request.js';
import type { Catalog } from '../../catalog/load-catalog.js';
import { MAX_ANSWER_POINTS, sharedArguments, tooManyAnswerPoints } from '../analytics-arguments.js';
import { metricOf, refuseUnknown } from '../argument-checks.js';
import { queryOf, restCost, restJson } from '../rest-query.js';
import type { Tool, ToolArguments } from '../tool.js';

/**
 * `total`: one metric summed (or averaged, …) across a group or projects per bucket, as
 * `GET /v1/totals/<name>` answers it in-process: the same JSON, priced and refused as REST.
 */
export function createTotalTool(catalog: Catalog): Tool {
  const shared = sharedArguments(catalog);
  const pathOf = (args: ToolArguments) => {
    refuseUnknown(args, ['metric', ...QUERY]);
    return `/v1/totals/${encodeURIComponent(metricOf(args, catalog.byName).name)}`;
  };
  return {
    name: 'total',
    title: 'Total a metric across projects',
    description:
      'One value per bucket combining a metric across a group or a list of projects (op: sum by default, avg, ' +
      'min, max, count, median), with how many members contributed and which were missing; the options of ' +
      `GET /v1/totals/<name>. At most ${MAX_ANSWER_POINTS} points: ask for a coarser interval for more.`,
    input: z.object({
      metric: shared.metric,
      group: shared.group,
      project: shared.project,
      start_date: shared.start_date,
      end_date: shared.end_date,
      interval: shared.interval,
      aggregation: shared.aggregation,
      fill: shared.fill,
      transform: shared.transform,
      window: shared.window,
      as_of: shared.as_of,
      op: z.enum(TOTAL_OPS).optional().describe("How a bucket's member values combine; default sum."),
      require_complete: z
        .boolean()
        .optional()
        .describe('true: a bucket some expected member has no value in is null rather than a partial total.'),
    }),
    output: z.looseObject({
      metric: z.string(),
      op: z.enum(TOTAL_OPS),
      expected: z.array(z.string()).describe('The members, in order.'),
      points: z.array(
        z.looseObject({
          date: z.string(),
          value: z.number().nullable(),
          contributors: z.int().describe('Members with a value in the bucket.'),
          missing: z.array(z.string()).describe('Expected members without one.'),
        }),
      ),
    }),
    cost: (args, context) => restCost(context, pathOf(args), queryOf(args, QUERY)),
    run: async (args, context) => {
      const { text, json } = await restJson(context, pathOf(args), queryOf(args, QUERY));
      const points = (json.points as unknown[]).length;
      if (points > MAX_ANSWER_POINTS) throw tooManyAnswerPoints(points);
      return { structured: json, text };
    },
  };
}

// Private

/** The query's parameters, in REST's order. */
const QUERY = [
  'project',
  'group',
  'start_date',
  'end_date',
  'interval',
  'aggregation',
  'fill',
  'transform',
  'window',
  'as_of',
  'op',
  'require_complete',
] as const;
