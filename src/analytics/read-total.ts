import { guardUnavailable } from '../api/unavailable.js';
import type { CancelSignal, Store } from '../db/store.js';
import type { SeriesPlan } from '../series/series-plan.js';
import type { TotalOp } from './total-request.js';
import { totalStatement } from './total-sql.js';

/** One bucket of a total. */
export interface TotalPoint {
  date: string;
  /** PostgreSQL's numeric text (exact, no trailing zeros); null for an unknown or incomplete total. */
  value: string | null;
  /** Members with a value in the bucket. */
  contributors: number;
  /** Members expected in the bucket (their stored days span it) without a value, in member order. */
  missing: string[];
}

/** A total as both APIs answer it. */
export interface Total {
  metric: string;
  op: TotalOp;
  /** The members the total is over, in order. */
  expected: readonly string[];
  points: TotalPoint[];
}

/**
 * Reads a total in one statement: the plan holds the members' series request (its
 * projects are the members), `op` and `requireComplete` how they combine. A store
 * failure becomes the 503 ApiError.
 */
export async function readTotal(
  store: Pick<Store, 'query'>,
  plan: SeriesPlan,
  op: TotalOp,
  requireComplete: boolean,
  signal?: CancelSignal,
): Promise<Total> {
  const { text, parameters } = totalStatement({ options: plan.options, op, requireComplete, asOf: plan.asOf !== null });
  const rows = await guardUnavailable(() =>
    store.query<TotalRow>(
      text,
      parameters({
        projectIds: plan.projects.map((p) => p.id),
        slugs: plan.projects.map((p) => p.slug),
        from: plan.from,
        to: plan.to,
        metric: plan.metric.name,
        options: plan.options,
        asOf: plan.asOf,
      }),
      signal,
    ),
  );
  return {
    metric: plan.metric.name,
    op,
    expected: plan.projects.map((p) => p.slug),
    points: rows.map((r) => ({
      date: r.date,
      value: r.value,
      contributors: Number(r.contributors),
      missing: JSON.parse(r.missing) as string[],
    })),
  };
}

/** A total as REST writes it: the numbers' exact text, never a double's. */
export function totalJson(total: Total): string {
  const points = total.points.map(
    (p) =>
      `{"date":"${p.date}","value":${p.value ?? 'null'},"contributors":${p.contributors},` +
      `"missing":${JSON.stringify(p.missing)}}`,
  );
  return (
    `{"metric":${JSON.stringify(total.metric)},"op":"${total.op}","expected":${JSON.stringify(total.expected)},` +
    `"points":[${points.join(',')}]}`
  );
}

// Private

interface TotalRow {
  date: string;
  value: string | null;
  contributors: string;
  missing: string;
}
