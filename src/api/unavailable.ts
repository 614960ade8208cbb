import { isUnavailableError } from '../db/classify-error.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import { ApiError } from './api-error.js';

/** Seconds a client is asked to wait when the database is away or too slow. */
const RETRY_AFTER_SECONDS = 5;

/** The client-facing 503 for a store error that means "away or too slow"; any other error as it was. */
function asUnavailable(cause: unknown): unknown {
  if (!isUnavailableError(cause)) return cause;
  return unavailable('the database is unavailable or too slow; retry shortly', { cause });
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
export function readyDirectory(state: {
  readonly stopping: boolean;
  readonly directory: ProjectDirectory | undefined;
}): ProjectDirectory {
  if (state.stopping)
    throw unavailable('the service is shutting down; retry shortly', { headers: { connection: 'close' } });
  if (state.directory === undefined)
    throw unavailable('the database is not ready yet (starting or reconnecting); retry shortly');
  return state.directory;
}

// Private

/** Every 503 the service gives: a retry hint, plus any headers of its own. */
function unavailable(detail: string, options: { headers?: Record<string, string>; cause?: unknown } = {}): ApiError {
  return new ApiError('unavailable', detail, {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS), ...options.headers },
    cause: options.cause,
  });
}
