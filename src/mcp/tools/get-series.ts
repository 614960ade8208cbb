import { z } from 'zod';
import { ApiError } from '../../api/api-error.js';
import type { Catalog } from '../../catalog/load-catalog.js';
import type { SeriesRequest } from '../../series/series-request.js';
import { CITATION_SCHEMA, citationOf, newestWrite } from '../citation.js';
import { mostPoints } from '../points-bound.js';
import { failedRest } from '../rest-failure.js';
import { restCost } from '../rest-query.js';
import { readSeriesRequest, restPathOf, seriesArgumentsSchema } from '../series-arguments.js';
import { SERIES_SUMMARY_SCHEMA, summarize, type AnswerPoint } from '../series-summary.js';
import type { Tool } from '../tool.js';

/** The most points one `get_series` answer holds, all series together: an agent reads them whole. */
export const MAX_TOOL_POINTS = 500;

/**
 * `get_series`: one metric's series, as `GET /v1/metrics/<name>` answers them (run in-process),
 * read as of the newest write to them so the answer can be cited: a summary per series, the
 * points, and where to fetch and check them again.
 */
export function createGetSeriesTool(catalog: Catalog): Tool {
  return {
    name: 'get_series',
    title: 'Get a metric series',
    description:
      'Daily (or bucketed) values of one metric for some projects, with every time-series option of ' +
      `GET /v1/metrics/<name>. Answers a summary per series first, then at most ${MAX_TOOL_POINTS} points ` +
      '(ask for a coarser interval for more), and a citation: the REST path and GraphQL query that give the same ' +
      "numbers, pinned with as_of to the newest write, and the SHA-256 of the REST answer's body.",
    input: seriesArgumentsSchema(catalog),
    output: z.object({
      metric: z.string(),
      series: z.array(SERIES_SUMMARY_SCHEMA).describe('One per requested project, in request order.'),
      points: z
        .record(z.string(), z.array(z.looseObject({ date: z.string(), value: z.number().nullable() })))
        .describe("The REST answer itself: each project's points, ascending by date."),
      citation: CITATION_SCHEMA,
    }),
    cost: (args, context) => {
      readSeriesRequest(args, catalog);
      // REST's own price: the `cost.units` of its answer to the same request with `dry_run=true`.
      const [path = '', query = ''] = restPathOf(args, args.as_of as string | undefined).split('?');
      return restCost(context, path, query);
    },
    run: async (args, context) => {
      const request = readSeriesRequest(args, catalog);
      const { services } = context;
      if (mostPoints(request, services.storedSpans, MAX_TOOL_POINTS) > MAX_TOOL_POINTS) throw tooManyPoints(request);
      const asOf = await newestWrite(services, request);
      const rest = restPathOf(args, asOf);
      const answer = await context.rest(rest);
      if (answer.status !== 200) throw failedRest(answer);
      const text = answer.body.toString('utf8');
      const points = JSON.parse(text) as Record<string, AnswerPoint[]>;
      const series = request.slugs.map((slug) => summarize(slug, points[slug] ?? []));
      if (series.reduce((n, s) => n + s.points, 0) > MAX_TOOL_POINTS) throw tooManyPoints(request);
      const citation = citationOf(request, args, asOf, rest, answer.body);
      const head = JSON.stringify({ metric: request.metric.name, series });
      return {
        structured: { metric: request.metric.name, series, points, citation },
        // The points as REST wrote them: a number a double would change keeps its digits here.
        text: `${head.slice(0, -1)},"points":${text},"citation":${JSON.stringify(citation)}}`,
      };
    },
  };
}

// Private

function tooManyPoints(request: SeriesRequest): ApiError {
  return new ApiError(
    'bad-request',
    `the answer would hold more than ${MAX_TOOL_POINTS} points (${request.slugs.length} series, ` +
      `interval ${request.options.interval}); ask for a coarser interval (week, month, quarter or year), ` +
      'a shorter range or fewer projects',
  );
}
