import { z } from 'zod';
import { ApiError } from '../api/api-error.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { seriesArgumentsSchema } from './series-arguments.js';

/** The most points a `total` or `formula` answer holds, all series together: an agent reads them whole. */
export const MAX_ANSWER_POINTS = 500;

/**
 * The arguments `total`, `rank` and `formula` share with `get_series` (the same option lists
 * the shared validation takes), and `group`: one of the catalog's groups of projects.
 */
export function sharedArguments(catalog: Catalog) {
  const { shape } = seriesArgumentsSchema(catalog);
  const groups = catalog.groups.map((g) => g.name);
  const group = (groups.length > 0 ? z.enum(groups as [string, ...string[]]) : z.string())
    .optional()
    .describe('A named group of projects (GET /v1/groups); its members are those the metric allows. Not with project.');
  return { ...shape, group };
}

/** The refusal of an answer of more points than an agent is given, and how to ask for fewer. */
export function tooManyAnswerPoints(points: number): ApiError {
  return new ApiError(
    'bad-request',
    `the answer would hold ${points} points, more than ${MAX_ANSWER_POINTS}; ask for a coarser interval ` +
      '(week, month, quarter or year), a shorter range or fewer projects',
  );
}
