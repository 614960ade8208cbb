import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { ApiError, ERROR_KINDS } from '../api/api-error.js';
import { UNLIMITED_METER, type RateLimitMeter } from '../limits/rate-limiter.js';
import type { GraphqlContext } from './builder.js';
import type { GraphqlServices } from './graphql-services.js';
import { formulaArgsSchema } from './formula.js';
import { metricArgsSchema } from './metric.js';
import { priceDocument } from './price-document.js';

/**
 * Answers a request sent with `x-dry-run: true` after parsing, validation and pricing,
 * without executing it: `{"data":null,"extensions":{"cost":{"units":N}}}`, N being what it
 * would be charged ({@link priceDocument}). A subscription is priced, not subscribed.
 */
export function useDryRun(services: GraphqlServices): Plugin<GraphqlContext, { dryRun?: boolean }> {
  const schemas = { metric: metricArgsSchema(services.catalog), formula: formulaArgsSchema(services.catalog) };
  const answer = async (args: Parameters<typeof priceDocument>[2], ctx: GraphqlContext): Promise<ExecutionResult> => {
    try {
      return { data: null, extensions: { cost: { units: await priceDocument(services, schemas, args, ctx) } } };
    } catch (error) {
      return { data: null, errors: [refusal(error)] };
    }
  };
  const isDryRun = (ctx: unknown) => (ctx as { dryRun?: boolean }).dryRun === true;
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      if (isDryRun(args.contextValue))
        setResultAndStopExecution(await answer(args, args.contextValue as GraphqlContext));
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      if (isDryRun(args.contextValue))
        setResultAndStopExecution(await answer(args, args.contextValue as GraphqlContext));
    },
  };
}

/**
 * Puts what the request was charged in its answer's `extensions.cost.units`, in whatever
 * transport (JSON, an event stream, multipart), refusals of the document included; a dry
 * run's answer keeps its price. A subscription's events carry none: they are notifications
 * charged nothing, the subscription having paid its unit when it opened.
 */
export function useCostExtension(): Plugin<object, { meter?: RateLimitMeter }> {
  return {
    onResultProcess({ result, serverContext }) {
      const { meter } = serverContext;
      // Not keyed (Yoga used alone, in tests): nothing was charged to anyone.
      if (meter === undefined || meter === UNLIMITED_METER) return;
      if (isAsyncIterable(result)) return;
      if (Array.isArray(result)) for (const each of result) withCost(each, meter);
      else withCost(result, meter);
    },
  };
}

// Private

/**
 * An argument or variable the request would be refused for, as execution reports it (yoga.ts masks
 * errors the same way): `BAD_USER_INPUT`, with the parameter errors of a 400.
 */
function refusal(error: unknown): GraphQLError {
  if (error instanceof ApiError) {
    const extensions = {
      code: ERROR_KINDS[error.kind].graphqlCode,
      ...(error.errors.length > 0 ? { errors: error.errors } : {}),
    };
    return new GraphQLError(error.message, { extensions });
  }
  if (error instanceof GraphQLError)
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      extensions: { code: ERROR_KINDS['bad-request'].graphqlCode },
    });
  throw error;
}

function withCost<T extends ExecutionResult>(result: T, meter: RateLimitMeter): T {
  const extensions = (result.extensions ?? {}) as Record<string, unknown>;
  if (extensions.cost === undefined) result.extensions = { ...extensions, cost: { units: meter.units } };
  return result;
}
