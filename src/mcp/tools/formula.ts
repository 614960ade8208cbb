import { z } from 'zod';
import type { Catalog } from '../../catalog/load-catalog.js';
import { FUNCTIONS, MAX_EXPRESSION_LENGTH, MAX_INPUTS } from '../../formula/formula-expression.js';
import { MAX_ANSWER_POINTS, sharedArguments, tooManyAnswerPoints } from '../analytics-arguments.js';
import { refuseUnknown } from '../argument-checks.js';
import { queryOf, restCost, restJson } from '../rest-query.js';
import type { Tool, ToolArguments } from '../tool.js';

/**
 * `formula`: an expression over stored metrics per bucket of each project, as
 * `GET /v1/formula` answers it in-process: the same JSON, priced and refused as REST.
 */
export function createFormulaTool(catalog: Catalog): Tool {
  const shared = sharedArguments(catalog);
  const queryOfCall = (args: ToolArguments) => {
    refuseUnknown(args, QUERY);
    return queryOf(args, QUERY, ['input']);
  };
  return {
    name: 'formula',
    title: 'Compute a formula over metrics',
    description:
      'An arithmetic expression over named inputs, each a stored metric bucketed with its aggregation, evaluated ' +
      'per bucket of each project all inputs allow; answered as a series is, {project: [{date, value}]}. The ' +
      `options of GET /v1/formula. At most ${MAX_ANSWER_POINTS} points: ask for a coarser interval for more.`,
    input: z.object({
      expr: z
        .string()
        .max(MAX_EXPRESSION_LENGTH)
        .describe(
          'The expression: numbers, input names, + - * / ^, unary minus, parentheses and the functions ' +
            `${Object.keys(FUNCTIONS).join(', ')}; e.g. 100 * p / (p + b).`,
        ),
      input: z
        .array(z.string())
        .min(1)
        .max(MAX_INPUTS)
        .describe('Each input as name:metric or name:metric:aggregation, e.g. p:priority-fees-usd.'),
      project: shared.project,
      start_date: shared.start_date,
      end_date: shared.end_date,
      interval: shared.interval,
      fill: shared.fill,
      transform: shared.transform,
      window: shared.window,
      as_of: shared.as_of,
      limit_per_project: shared.limit_per_project,
    }),
    output: z.record(
      z.string(),
      z.array(z.looseObject({ date: z.string(), value: z.number().nullable() })).describe("A project's points."),
    ),
    cost: (args, context) => restCost(context, '/v1/formula', queryOfCall(args)),
    run: async (args, context) => {
      const { text, json } = await restJson(context, '/v1/formula', queryOfCall(args));
      const points = Object.values(json).reduce((n: number, series) => n + (series as unknown[]).length, 0);
      if (points > MAX_ANSWER_POINTS) throw tooManyAnswerPoints(points);
      return { structured: json, text };
    },
  };
}

// Private

/** The query's parameters, in REST's order. */
const QUERY = [
  'expr',
  'input',
  'project',
  'start_date',
  'end_date',
  'interval',
  'fill',
  'transform',
  'window',
  'as_of',
  'limit_per_project',
];
