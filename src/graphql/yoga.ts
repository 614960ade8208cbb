import { useGraphQlJit } from '@envelop/graphql-jit';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { getOperationAST, GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { ApiError, ERROR_KINDS } from '../api/api-error.js';
import { createSeriesLoaders } from '../api/series-loader.js';
import { API_KEY_HEADER } from '../auth/api-keys.js';
import type { Services } from '../services.js';
import type { GraphqlContext } from './builder.js';
import { EXAMPLE_QUERY } from './example-query.js';
import { schema } from './schema.js';

export const GRAPHQL_PATH = '/graphql';

/**
 * The GraphQL endpoint. Every request gets fresh loaders. Errors the client caused keep
 * their message and `extensions.code`; anything else is masked to a generic message and
 * logged, so no stack, SQL text or parameter reaches a client.
 */
export function createGraphqlServer(services: Services): YogaServerInstance<Record<string, never>, GraphqlContext> {
  return createYoga<Record<string, never>, GraphqlContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    logging: false,
    batching: false,
    // Compiled execution: a series of thousands of points resolves about three times faster.
    // Only queries are compiled; anything else takes graphql's own path and its errors.
    plugins: [
      useGraphQlJit({}, {
        enableIf: (args) => getOperationAST(args.document, args.operationName)?.operation === 'query',
        onError: () => {},
      }),
    ],
    context: () => ({ services, loaders: createSeriesLoaders(services.store, services.directory) }),
    graphiql: services.config.graphiql
      ? {
          title: 'Metrics GraphiQL',
          defaultQuery: EXAMPLE_QUERY,
          headers: JSON.stringify({ [API_KEY_HEADER]: services.localKey ?? '' }),
          shouldPersistHeaders: false,
        }
      : false,
    renderGraphiQL,
    maskedErrors: {
      maskError: (error) => maskError(services, error),
    },
  });
}

// Private

function maskError(services: Services, error: unknown): Error {
  const original = error instanceof GraphQLError && error.originalError !== undefined ? error.originalError : error;
  if (original instanceof ApiError) {
    return new GraphQLError(original.message, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: {
        code: ERROR_KINDS[original.kind].graphqlCode,
        http: { status: original.status, headers: original.headers },
      },
    });
  }
  if (original instanceof GraphQLError && error instanceof GraphQLError && error.path === undefined) {
    // graphql's own request errors (no root type for the operation, a variable it cannot coerce) are the client's.
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      extensions: { code: 'BAD_USER_INPUT', http: { status: 400 }, ...error.extensions },
    });
  }
  if (original instanceof GraphQLError && typeof original.extensions.code === 'string') return original;
  services.logger.error({ err: original }, 'unexpected error in a GraphQL resolver');
  return new GraphQLError('Unexpected error.', {
    path: error instanceof GraphQLError ? error.path : undefined,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}
