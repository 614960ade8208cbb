import { isUnavailableError } from '../db/classify-error.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { ServiceState } from '../services.js';
import { ApiError } from './api-error.js';

/** Seconds a client is asked to wait when the database is away or too slow. */
export const RETRY_AFTER_SECONDS = 5;

/** The client-facing 503 for a store error that means "away or too slow"; any other error as it was. */
export function asUnavailable(cause: unknown): unknown {
  if (!isUnavailableError(cause)) return cause;
  return new ApiError('unavailable', 'the database is unavailable or too slow; retry shortly', {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    cause,
  });
}

/** Runs store work, turning availability failures into the 503 ApiError. */
export async function guardUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (cause) {
    throw asUnavailable(cause);
  }
}

/** The same for a stream of rows: stopping early still closes the source. */
export async function* guardStream<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (cause) {
    throw asUnavailable(cause);
  }
}

/** The project directory once the database is prepared; until then (or while stopping) the 503. */
export function readyDirectory(state: ServiceState): ProjectDirectory {
  if (state.stopping) {
    throw new ApiError('unavailable', 'the service is shutting down; retry shortly', { headers: { 'retry-after': String(RETRY_AFTER_SECONDS), connection: 'close' } });
  }
  if (state.directory === undefined) {
    throw new ApiError('unavailable', 'the database is not ready yet (starting or reconnecting); retry shortly', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    });
  }
  return state.directory;
}
