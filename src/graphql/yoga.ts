import { useGraphQlJit } from '@envelop/graphql-jit';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { getOperationAST, GraphQLError, Kind, type DocumentNode } from 'graphql';
import {
  createYoga,
  isAsyncIterable,
  processRegularResult,
  type GraphiQLOptions,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import { ApiError, ERROR_KINDS } from '../api/api-error.js';
import { API_KEY_HEADER } from '../auth/api-keys.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import { CancelledError, type CancelSignal } from '../db/store.js';
import type { RateLimitMeter } from '../limits/rate-limiter.js';
import type { KeyCheck } from '../live/series-updates.js';
import { createSeriesLoaders } from '../series/series-loader.js';
import type { GraphqlServices } from './graphql-services.js';
import { useAnswerBudget } from './answer-size.js';
import { useArgumentErrors } from './argument-errors.js';
import { useCostExtension, useDryRun } from './dry-run.js';
import { useGraphqlArmor } from './armor.js';
import type { GraphqlContext } from './builder.js';
import { exampleQuery } from './example-query.js';
import { renderGraphiqlPage } from './graphiql-page.js';
import { createSplices, useSplices, type Splices } from './splice.js';
import { createGraphqlSchema } from './schema.js';
import { useVariableCheck } from './variable-check.js';

/** What the route hands Yoga with each request. */
export interface GraphqlServerContext {
  directory: ProjectDirectory;
  signal: CancelSignal;
  /** The caller's rate-limit account for this request. */
  meter: RateLimitMeter;
  /** The key's stable id: open subscriptions are counted per key. */
  caller: string;
  /** Whether the request's key still counts: an open subscription ends once it does not. */
  keyStillValid?: KeyCheck;
  /** See GraphqlContext.reserveAnswer; called once per query, before it runs (answer-size.ts). */
  reserveAnswer(bytes: number): Promise<void>;
  /** Splices the route puts in as bytes (see splice.ts); made here when Yoga is used alone. */
  splices?: Splices;
  /** Filled in once the result is known, for the route to decide whether to keep the answer. */
  outcome?: ExecutionOutcome;
  /** The request asks only its price (`x-dry-run: true`): answered after pricing, never executed. */
  dryRun?: boolean;
}

/** What the route learns of an execution's result. */
export interface ExecutionOutcome {
  /** The answer is one JSON result without errors: the only kind the response cache may keep. */
  complete: boolean;
  /** A resolver read or changed the caller's own data (hooks): the answer is never kept. */
  personal?: boolean;
}

/**
 * The GraphQL executor of the catalog's schema. Every request gets fresh loaders. Errors
 * the client caused keep their message and `extensions.code`; anything else is masked to
 * a generic message and logged, so no stack, SQL text or parameter reaches a client.
 */
export function createGraphqlServer(
  services: GraphqlServices,
): YogaServerInstance<GraphqlServerContext, GraphqlContext> {
  return createYoga<GraphqlServerContext, GraphqlContext>({
    schema: createGraphqlSchema(services.catalog),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    batching: false,
    // CORS is the app's, the same for every route (src/http/cors.ts: CORS_ORIGINS only).
    // Yoga's own default reflected any Origin with credentials allowed, over that policy.
    cors: false,
    // The route reads the body with its own 1 MB limit (413 in our error format) before Yoga sees it.
    maxRequestBodySize: false,
    plugins: [
      // A browser sends a custom header only after a CORS preflight, so a request that
      // carries one cannot be a cross-site "simple" request. The API key is such a header
      // and the app demands it before Yoga sees a request; naming it here keeps Yoga
      // refusing simple requests (403) should an operation ever be served without a key.
      useCSRFPrevention({ requestHeaders: [API_KEY_HEADER, 'x-graphql-yoga-csrf'] }),
      useGraphqlArmor(),
      useArgumentErrors(),
      useVariableCheck(),
      // Compiled execution: more GraphQL answers per second under load, in paired bench runs.
      // Only queries are compiled; anything else takes graphql's own path and its errors.
      useGraphQlJit(
        {},
        {
          enableIf: (args) => isCompiledQuery(args.document, args.operationName),
          onError: () => {},
        },
      ),
      useDryRun(services),
      useAnswerBudget(services),
      useSplices(),
      useOutcome(),
      useCostExtension(),
    ],
    context: ({ directory, signal, meter, caller, keyStillValid, reserveAnswer, splices, dryRun, outcome }) => ({
      services,
      directory,
      meter,
      caller,
      keyStillValid,
      signal,
      reserveAnswer,
      loaders: createSeriesLoaders(services.reads, directory, signal),
      splices: splices ?? createSplices(),
      pointReads: new Map(),
      dryRun,
      personal: () => {
        if (outcome !== undefined) outcome.personal = true;
      },
    }),
    graphiql: services.config.graphiql ? () => graphiqlOptions(services) : false,
    // The editor's files are served from the package (no CDN), by their own URLs (graphiql-assets.ts).
    renderGraphiQL: renderGraphiqlPage,
    maskedErrors: {
      maskError: (error) => maskGraphqlError(services, error),
    },
  });
}

// Private

/** Records in the route's `outcome` whether the answer is one JSON result without errors. */
function useOutcome(): Plugin<object, GraphqlServerContext> {
  return {
    onResultProcess({ result, resultProcessor, serverContext }) {
      if (serverContext.outcome === undefined) return;
      const single = !Array.isArray(result) && !isAsyncIterable(result);
      serverContext.outcome.complete =
        resultProcessor === processRegularResult &&
        single &&
        !result.errors?.length &&
        serverContext.outcome.personal !== true;
    },
  };
}

/**
 * Whether an execution is compiled: a query, its document's only operation. The plugin keeps
 * what it compiled by document, whatever the operation name, so of a document of two
 * operations the one compiled first answered for both.
 */
function isCompiledQuery(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  return operations.length === 1 && getOperationAST(document, operationName)?.operation === 'query';
}

/**
 * GraphiQL's page never holds a key: its headers editor starts with the header name and an
 * empty value (GraphiQL's `defaultHeaders`, passed through by Yoga's renderer), the user
 * types the key, and GraphiQL keeps the headers in the browser's own storage.
 */
function graphiqlOptions(services: GraphqlServices): GraphiQLOptions {
  const options: GraphiQLOptions & { defaultHeaders: string } = {
    title: 'Metrics GraphiQL',
    defaultQuery: exampleQuery(services.state.example),
    defaultHeaders: JSON.stringify({ [API_KEY_HEADER]: '' }),
    shouldPersistHeaders: true,
  };
  return options;
}

/** What a client is told of an error: its own errors as they are, anything else masked and logged. */
function maskGraphqlError(services: GraphqlServices, error: unknown): Error {
  const original = error instanceof GraphQLError && error.originalError !== undefined ? error.originalError : error;
  if (original instanceof ApiError) {
    return new GraphQLError(original.message, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: {
        code: ERROR_KINDS[original.kind].graphqlCode,
        ...(original.errors.length > 0 ? { errors: original.errors } : {}),
        http: { status: original.status, headers: original.headers },
      },
    });
  }
  if (original instanceof GraphQLError && error instanceof GraphQLError && error.path === undefined)
    return requestError(error);
  if (original instanceof GraphQLError && typeof original.extensions.code === 'string') return original;
  // A CancelledError means the client has left (src/db/store.ts): nobody reads this answer, and nothing went wrong.
  const abandoned = original instanceof CancelledError;
  if (!abandoned) services.logger.error({ err: original }, 'unexpected error in a GraphQL resolver');
  return new GraphQLError(abandoned ? 'The request was abandoned.' : 'Unexpected error.', {
    path: error instanceof GraphQLError ? error.path : undefined,
    // `unexpected` (never serialized) lets Yoga answer 500 when no execution produced data.
    extensions: { code: 'INTERNAL_SERVER_ERROR', unexpected: true },
  });
}

/**
 * A request error of graphql's (no root type for the operation, a variable it cannot coerce)
 * or Yoga's (a method, body or parameter it refuses, a document that does not parse) in the
 * documented codes: Yoga's BAD_REQUEST and OPERATION_RESOLUTION_FAILURE become
 * METHOD_NOT_ALLOWED for a 405 and BAD_USER_INPUT otherwise. A refusal of the document (it
 * does not parse, is over a limit, would build too large an answer) keeps its `spec` mark,
 * which answers it with 200 to `application/json` clients, as GraphQL over HTTP asks; a
 * request that is not well formed is refused with its status for every client, though Yoga
 * marks some of those too. `originalError` (the JSON parser's error) is dropped: nothing
 * internal reaches a client.
 */
function requestError(error: GraphQLError): GraphQLError {
  const {
    originalError: _,
    code,
    http,
    ...rest
  } = error.extensions as { originalError?: unknown; code?: unknown; http?: YogaHttpExtension };
  const status = http?.status ?? 400;
  const malformed = code === undefined || code === 'BAD_REQUEST' || code === 'OPERATION_RESOLUTION_FAILURE';
  const documented = !malformed
    ? code
    : status === 405
      ? ERROR_KINDS['method-not-allowed'].graphqlCode
      : ERROR_KINDS['bad-request'].graphqlCode;
  const spec = !malformed && http?.spec === true;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    extensions: {
      ...rest,
      code: documented,
      http: { status, ...(http?.headers === undefined ? {} : { headers: http.headers }), ...(spec ? { spec } : {}) },
    },
  });
}

/** Yoga's `extensions.http`: the answer's status and headers; `spec` lets an `application/json` answer be a 200. */
interface YogaHttpExtension {
  status?: number;
  headers?: Record<string, string>;
  spec?: boolean;
}
