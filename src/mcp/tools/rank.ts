import { z } from 'zod';
import { MAX_TOP, RANK_BY, RANK_ORDERS } from '../../analytics/rank-request.js';
import type { Catalog } from '../../catalog/load-catalog.js';
import { sharedArguments } from '../analytics-arguments.js';
import { metricOf, refuseUnknown } from '../argument-checks.js';
import { queryOf, restCost, restJson } from '../rest-query.js';
import type { Tool, ToolArguments } from '../tool.js';

/**
 * `rank`: a group's or projects' ranking by one metric over a window, against the window
 * before it, as `GET /v1/rank/<name>` answers it in-process: the same JSON, priced and refused as REST.
 */
export function createRankTool(catalog: Catalog): Tool {
  const shared = sharedArguments(catalog);
  const pathOf = (args: ToolArguments) => {
    refuseUnknown(args, ['metric', ...QUERY]);
    return `/v1/rank/${encodeURIComponent(metricOf(args, catalog.byName).name)}`;
  };
  return {
    name: 'rank',
    title: 'Rank projects by a metric',
    description:
      "Projects ranked by one metric's value over a window of days (aggregated as the metric's default or " +
      'aggregation says), or by its change or percent change from the window of as many days just before; each ' +
      'row with its previous value and rank and its share of the total. The options of GET /v1/rank/<name>.',
    input: z.object({
      metric: shared.metric,
      group: shared.group,
      project: shared.project,
      start_date: z.iso.date().describe('First day of the window, YYYY-MM-DD, inclusive.'),
      end_date: z.iso.date().describe('Last day of the window, YYYY-MM-DD, inclusive.'),
      aggregation: shared.aggregation,
      as_of: shared.as_of,
      by: z.enum(RANK_BY).optional().describe('What ranks: the value (default), its change, or its percent change.'),
      order: z.enum(RANK_ORDERS).optional().describe('desc (default): the largest first.'),
      top: z.int().min(1).max(MAX_TOP).optional().describe('Rows answered; default 10.'),
    }),
    output: z.looseObject({
      metric: z.string(),
      start_date: z.string(),
      end_date: z.string(),
      previous_start_date: z.string(),
      previous_end_date: z.string(),
      rows: z.array(
        z.looseObject({
          rank: z.int(),
          project: z.string(),
          value: z.number().nullable(),
          previous_value: z.number().nullable(),
          previous_rank: z.int().nullable(),
          change: z.number().nullable(),
          change_percent: z.number().nullable(),
          share_of_total: z.number().nullable(),
        }),
      ),
      unranked: z.array(z.string()).describe('Members without data in the window.'),
    }),
    cost: (args, context) => restCost(context, pathOf(args), queryOf(args, QUERY)),
    run: async (args, context) => {
      const { text, json } = await restJson(context, pathOf(args), queryOf(args, QUERY));
      return { structured: json, text };
    },
  };
}

// Private

/** The query's parameters, in REST's order. */
const QUERY = ['project', 'start_date', 'end_date', 'aggregation', 'as_of', 'group', 'by', 'order', 'top'] as const;
