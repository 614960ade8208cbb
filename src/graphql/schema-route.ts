import { lexicographicSortSchema, printSchema } from 'graphql';
import type { Catalog } from '../catalog/load-catalog.js';
import { renderProblem } from '../http/render-error.js';
import type { Route } from '../http/route.js';
import { sendWhole } from '../http/send-json.js';
import { createGraphqlSchema } from './schema.js';

/** `GET /schema.graphql`: the GraphQL schema as SDL (what introspection tells), for tools and llms.txt; keyed. */
export function createSchemaRoute(catalog: Catalog): Route<unknown> {
  let sdl: Buffer | undefined;
  return {
    path: '/schema.graphql',
    access: 'keyed',
    methods: ['GET', 'HEAD'],
    errors: renderProblem,
    handle: ({ req, res }) => {
      sdl ??= Buffer.from(`${printSchema(lexicographicSortSchema(createGraphqlSchema(catalog)))}\n`);
      const headers = [
        ['content-type', 'text/plain; charset=utf-8'],
        ['cache-control', 'private, max-age=300'],
      ] as const;
      return sendWhole(req, res, { headers, body: sdl, compress: true });
    },
  };
}
