import type { RestCall } from './rest-services.js';
import { sendJson } from '../http/send-json.js';
import { readParameters } from './parse-query.js';

/**
 * `GET /v1/usage`: the calling key's spend, requests and units per UTC hour for the last 48
 * hours and per UTC day for the last 30 days (oldest first, every period listed, empty ones
 * as 0), and its limit and balance now (the `rateLimit` of a dry run). Counts from every
 * instance on the database; this request itself is counted after it is answered. No parameters.
 */
export async function handleUsage({ req, res, services, query, meter, caller }: RestCall): Promise<void> {
  readParameters(query, []);
  const usage = await services.usage.read(caller!.id);
  const rateLimit = await meter.quote();
  await sendJson(req, res, JSON.stringify({ rateLimit, ...usage }));
}
