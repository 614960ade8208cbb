import SchemaBuilder from '@pothos/core';
import ValidationPlugin from '@pothos/plugin-validation';
import { issuesError } from '../api/api-error.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { CancelSignal } from '../db/store.js';
import type { RateLimitMeter } from '../limits/rate-limiter.js';
import type { SeriesLoaders } from '../series/series-loader.js';
import type { SeriesPlan } from '../series/series-plan.js';
import type { GraphqlServices } from './graphql-services.js';
import type { Splices } from './splice.js';
import type { KeyCheck } from '../live/series-updates.js';

/**
 * What every resolver sees: the shared services and this request's own loaders, directory, rate-limit meter and
 * splices.
 */
export interface GraphqlContext {
  services: GraphqlServices;
  directory: ProjectDirectory;
  loaders: SeriesLoaders;
  meter: RateLimitMeter;
  /** The key's stable id. */
  caller: string;
  /** Whether the request's key still counts (false once revoked): open subscriptions ask it again and again. */
  keyStillValid?: KeyCheck;
  /** Aborts when the client leaves: cancels its statements, ends its subscription. */
  signal: CancelSignal;
  /** Marks the answer as the caller's own (their hooks): it is never kept in the shared response cache. */
  personal(): void;
  /**
   * Waits until an answer of about `bytes` may be built; what it reserves is given back when the
   * response is sent. Called once per query, before it runs (answer-size.ts), never by a resolver.
   */
  reserveAnswer(bytes: number): Promise<void>;
  /** Points' JSON text that serialization puts in place (see splice.ts). */
  splices: Splices;
  /**
   * The response paths (list indices left out) at which each plan's points were read in
   * this request, so that every further selection of them is charged (see series.ts).
   */
  pointReads: Map<SeriesPlan, Set<string>>;
  /** The request asks only its price (`x-dry-run: true`; dry-run.ts): nothing is executed. */
  dryRun?: boolean | undefined;
}

export interface SchemaTypes {
  Context: GraphqlContext;
  Scalars: {
    Date: { Input: string; Output: string };
    DateTime: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}

export type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<SchemaTypes>>;

/**
 * A schema builder with the context and scalar types; the types themselves are added by the files beside it.
 * A field's arguments declare their validation (`validate`); what it refuses is a 400 ApiError naming each
 * argument, rendered as REST's are (`BAD_USER_INPUT`, with `errors`).
 */
export function createBuilder(): Builder {
  return new SchemaBuilder<SchemaTypes>({
    plugins: [ValidationPlugin],
    defaultFieldNullability: false,
    validation: { validationError: (failure) => issuesError(failure.issues) },
  });
}
