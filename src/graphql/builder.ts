import SchemaBuilder from '@pothos/core';
import ZodPlugin from '@pothos/plugin-zod';
import { GraphQLError } from 'graphql';
import { toParamErrors } from '../api/run-series-request.js';
import type { SeriesLoaders } from '../api/series-loader.js';
import type { RateLimitMeter } from '../http/rate-limit.js';
import type { Services } from '../services.js';

/** What every resolver sees: the shared services, this request's own loaders and its rate-limit meter. */
export interface GraphqlContext {
  services: Services;
  loaders: SeriesLoaders;
  meter: RateLimitMeter;
}

/** GraphQL argument names for the fields of the shared series request. */
export const GRAPHQL_ARGS = { metric: 'name', projects: 'projects', from: 'from', to: 'to' } as const;

/** The schema builder: plugins, context and scalar types only; types live in their own files. */
export const builder = new SchemaBuilder<{
  Context: GraphqlContext;
  Scalars: {
    Date: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ZodPlugin],
  defaultFieldNullability: false,
  zod: {
    validationError: (error) => {
      const errors = toParamErrors(error, GRAPHQL_ARGS);
      return new GraphQLError(errors.map((e) => `${e.param}: ${e.message}`).join('; '), {
        extensions: { code: 'BAD_USER_INPUT', errors },
      });
    },
  },
});
