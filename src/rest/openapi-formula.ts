import type { Catalog } from '../catalog/load-catalog.js';
import { MAX_EXPRESSION_LENGTH, MAX_INPUTS } from '../formula/formula-expression.js';
import { errorResponses, RATE_LIMIT_HEADERS, SERIES_PARAMETERS } from './openapi-operations.js';

/** `GET /v1/formula`: an expression per bucket of stored metrics, in the contract's answer shape. */
export function formulaOperation(catalog: Catalog): Record<string, unknown> {
  const projects = [...new Set(catalog.metrics.flatMap((m) => m.projects))];
  return {
    operationId: 'getFormula',
    summary: 'An expression over stored metrics per bucket of each project (extension)',
    description:
      'Each input is bucketed with its own aggregation, the inputs are joined on (project, bucket) and the ' +
      'expression is evaluated per bucket; a bucket where an input is missing has no point (a null one with ' +
      'fill=null). Division by zero, ln or sqrt out of range and results beyond about 1e300 are null. ' +
      'Projects: those every input allows (omitted: all of them). Priced as the sum of its inputs.',
    parameters: [
      {
        name: 'expr',
        in: 'query',
        required: true,
        description:
          'Operators + - * / ^ (right-associative), unary minus (binding tightest), parentheses, numbers, ' +
          `input names, abs min max coalesce ln exp sqrt; at most ${MAX_EXPRESSION_LENGTH} characters and 64 nodes.`,
        schema: { type: 'string', maxLength: MAX_EXPRESSION_LENGTH, examples: ['100 * p / (p + b)'] },
      },
      {
        name: 'input',
        in: 'query',
        required: true,
        description:
          `One per input (1 to ${MAX_INPUTS}), repeated: name:metric or name:metric:aggregation; the name ` +
          "matches [a-z_][a-z0-9_]{0,15}, the aggregation defaults to the metric's.",
        style: 'form',
        explode: true,
        schema: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_INPUTS,
          items: { type: 'string', examples: ['p:priority-fees-usd', 'b:transaction-base-fee-total-usd:sum'] },
        },
      },
      {
        name: 'group',
        in: 'query',
        required: false,
        description: 'A group (GET /v1/groups) instead of project: its projects every input metric allows.',
        schema: { enum: catalog.groups.map((g) => g.name) },
      },
      {
        name: 'project',
        in: 'query',
        required: false,
        description: 'One slug or several joined with commas; each must be allowed by every input metric.',
        style: 'form',
        explode: false,
        schema: { type: 'array', minItems: 1, items: { enum: projects } },
      },
      // Each input names its aggregation; a formula reads current values only (no vintage).
      ...SERIES_PARAMETERS.filter((p) => !/\/(?:Aggregation|Vintage|LagDays)$/.test(p.$ref)),
    ],
    responses: {
      '200': {
        description: 'One key per project in request order, each an array of points ascending by date.',
        headers: { ETag: { schema: { type: 'string' } }, ...RATE_LIMIT_HEADERS },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: { type: 'array', items: { $ref: '#/components/schemas/DataPoint' } },
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'method-not-allowed', 'rate-limited', 'unavailable']),
    },
  };
}
