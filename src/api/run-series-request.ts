import type { z } from 'zod';
import type { Services } from '../services.js';
import { ApiError, type ParamError } from './api-error.js';
import type { SeriesRequest, SeriesRequestField, SeriesRequestInput } from './series-request.js';

/**
 * Validates an input with the shared schema. Failures become one 400 ApiError whose
 * `errors` name each parameter in the caller's own vocabulary (`names`).
 */
export function validateSeriesRequest(
  services: Pick<Services, 'requestSchema'>,
  input: SeriesRequestInput,
  names: Readonly<Record<SeriesRequestField, string>>,
): SeriesRequest {
  const result = services.requestSchema.safeParse(input);
  if (result.success) return result.data;
  const errors = toParamErrors(result.error, names);
  throw new ApiError('bad-request', errors.map((e) => `${e.param}: ${e.message}`).join('; '), { errors });
}

/** Maps zod issues to `{param, message}` pairs using the caller's parameter names. */
export function toParamErrors(error: z.ZodError, names: Readonly<Record<SeriesRequestField, string>>): ParamError[] {
  return error.issues.map((issue) => {
    const field = issue.path[0];
    const param = typeof field === 'string' && field in names ? names[field as SeriesRequestField] : String(field ?? 'request');
    return { param, message: issue.message };
  });
}
