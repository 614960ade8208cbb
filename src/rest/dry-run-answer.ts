import { sendJson } from '../http/send-json.js';
import { DRY_RUN_PARAM, dryRunValue } from '../limits/dry-run.js';
import type { RestCall } from './rest-services.js';

/**
 * Whether a REST request asks only its price: `dry_run=true`; false for `dry_run=false` or
 * none, and a 400 naming `dry_run` for any other value. A series route asks it once it has
 * validated and priced the request, before charging or reading anything, and answers with
 * {@link answerDryRun}:
 *
 *     if (isDryRun(call)) return answerDryRun(call, cost);
 *
 * and its line in the route table says `dryRun: true`, so the app spares such a request the key's unit.
 */
export function isDryRun({ query }: Pick<RestCall, 'query'>): boolean {
  if (!query.includes(DRY_RUN_PARAM)) return false;
  return dryRunValue(DRY_RUN_PARAM, new URLSearchParams(query).get(DRY_RUN_PARAM) ?? undefined);
}

/**
 * Answers a dry run: 200 `{"cost":{"units":N},"rateLimit":{"limit","remaining","resetSeconds"}}`,
 * `units` being what the request would be charged (never less than the one unit every
 * request pays) and `rateLimit` the key's bucket now (all null for a key without a limit).
 * The key's balance is left as it was: the app charged the dry run to the key's dry-run
 * bucket instead (rate-limiter.ts).
 */
export async function answerDryRun({ req, res, meter }: RestCall, cost: number): Promise<void> {
  const rateLimit = await meter.quote();
  await sendJson(req, res, JSON.stringify({ cost: { units: Math.max(1, cost) }, rateLimit }));
}
