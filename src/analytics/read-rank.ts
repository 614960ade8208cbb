import { guardUnavailable } from '../api/unavailable.js';
import type { CancelSignal, Store } from '../db/store.js';
import type { SeriesPlan } from '../series/series-plan.js';
import type { RankRequest, RankWindow } from './rank-request.js';
import { rankStatement } from './rank-sql.js';

/** One ranked member. Numbers are PostgreSQL's exact text; null where there is none. */
export interface RankRow {
  rank: number;
  slug: string;
  value: string;
  previousValue: string | null;
  previousRank: number | null;
  change: string | null;
  changePercent: string | null;
  shareOfTotal: string | null;
}

/** A ranking as both APIs answer it. */
export interface Ranking {
  metric: string;
  current: RankWindow;
  previous: RankWindow;
  /** The top rows, by rank. */
  rows: RankRow[];
  /** Members without data in the window, in member order. */
  unranked: string[];
}

/**
 * Reads a ranking in one statement. `plan` is the members' series plan (its projects are
 * the members, with the request's aggregation and `asOf`). A store failure becomes the
 * 503 ApiError.
 */
export async function readRanking(
  store: Pick<Store, 'query'>,
  plan: SeriesPlan,
  request: RankRequest,
  signal?: CancelSignal,
): Promise<Ranking> {
  const { text, parameters } = rankStatement({
    aggregation: plan.options.aggregation,
    by: request.by,
    order: request.order,
    asOf: plan.asOf !== null,
  });
  const windows = [request.current, request.previous, ...(request.prior === null ? [] : [request.prior])];
  const rows = await guardUnavailable(() =>
    store.query<RankRowText>(
      text,
      parameters({
        projectIds: plan.projects.map((p) => p.id),
        slugs: plan.projects.map((p) => p.slug),
        windows: windows.map((w): [string, string] => [w.from, w.to]),
        asOf: plan.asOf,
      }),
      signal,
    ),
  );
  const ranked = rows
    .filter((r) => r.rank !== null)
    .map(
      (r): RankRow => ({
        rank: Number(r.rank),
        slug: r.slug,
        value: r.value!,
        previousValue: r.previous_value,
        previousRank: r.previous_rank === null ? null : Number(r.previous_rank),
        change: r.change,
        changePercent: r.change_percent,
        shareOfTotal: r.share_of_total,
      }),
    )
    .sort((a, b) => a.rank - b.rank);
  return {
    metric: plan.metric.name,
    current: request.current,
    previous: request.previous,
    rows: ranked.slice(0, request.top),
    unranked: rows.filter((r) => r.rank === null).map((r) => r.slug),
  };
}

/** A ranking as REST writes it: snake_case, the numbers' exact text. */
export function rankingJson(ranking: Ranking): string {
  const number = (text: string | null) => text ?? 'null';
  const rows = ranking.rows.map(
    (r) =>
      `{"rank":${r.rank},"project":${JSON.stringify(r.slug)},"slug":${JSON.stringify(r.slug)},` +
      `"value":${r.value},"previous_value":${number(r.previousValue)},"previous_rank":${r.previousRank ?? 'null'},` +
      `"change":${number(r.change)},"change_percent":${number(r.changePercent)},` +
      `"share_of_total":${number(r.shareOfTotal)}}`,
  );
  return (
    `{"metric":${JSON.stringify(ranking.metric)},"start_date":"${ranking.current.from}",` +
    `"end_date":"${ranking.current.to}","previous_start_date":"${ranking.previous.from}",` +
    `"previous_end_date":"${ranking.previous.to}","rows":[${rows.join(',')}],` +
    `"unranked":${JSON.stringify(ranking.unranked)}}`
  );
}

// Private

interface RankRowText {
  slug: string;
  value: string | null;
  previous_value: string | null;
  change: string | null;
  change_percent: string | null;
  share_of_total: string | null;
  rank: string | null;
  previous_rank: string | null;
}
