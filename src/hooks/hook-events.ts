import type { Queryable } from '../db/store.js';
import type { HookFilter, HookRule, ThresholdOp } from './hook-input.js';

/** One event of a delivery's body. */
export interface HookEvent {
  /** The index in the hook's `rules` of the rule that fired. */
  rule: number;
  /** That rule's type. */
  type: HookRule['type'];
  metric: string;
  project: string;
  date: string;
  /** The value written (PostgreSQL's exact numeric text); null for a removal and for `late`. */
  value: string | null;
  /** The value it replaced, or for a new day the series' day before it (threshold); null when none. */
  previousValue: string | null;
  /** When the write happened (UTC, microseconds); for `late`, when it was found late. */
  updatedAt: string;
}

/** One write of the change log with what the rules compare it with. */
export interface FeedWrite {
  seq: string;
  metric: string;
  slug: string;
  day: string;
  value: string | null;
  /** Whether a value was served for the day just before this write: false means a new day. */
  replaced: boolean;
  /** That value; null when there was none. */
  previous: string | null;
  /** The series' latest earlier day's value as it was at the write (threshold rules only). */
  dayBefore: string | null;
  writtenAt: string;
}

/**
 * The writes after `afterSeq` up to `throughSeq` that `filter` lets through, in commit
 * order, each with the value it replaced (from the revision history: the value whose
 * served span ended at this write) and, when `withDayBefore`, the series' preceding day as
 * it was then. The span is bounded by the caller, so one call reads a bounded slice of the log.
 */
export async function readFeedWrites(
  db: Queryable,
  afterSeq: string,
  throughSeq: string,
  filter: HookFilter,
  withDayBefore: boolean,
): Promise<FeedWrite[]> {
  return db.query<FeedWrite>(FEED_SQL, [
    afterSeq,
    throughSeq,
    filter.metrics ?? null,
    filter.projects ?? null,
    withDayBefore,
  ]);
}

/**
 * The events `rules` make of one write, one per rule that fires:
 * - `landed`: a day stored where none was served;
 * - `revision`: a served value changed by at least `minAbsPercent` % of itself (any change
 *   of a zero), or removed;
 * - `threshold`: the value written meets `op value` while the value before it did not (the
 *   one it replaced, or for a new day the series' preceding day; none counts as not meeting it).
 */
export function eventsOfWrite(rules: readonly HookRule[], write: FeedWrite): HookEvent[] {
  const events: HookEvent[] = [];
  const event = (rule: number, previousValue: string | null): HookEvent => ({
    rule,
    type: rules[rule]!.type,
    metric: write.metric,
    project: write.slug,
    date: write.day,
    value: write.value,
    previousValue,
    updatedAt: write.writtenAt,
  });
  rules.forEach((rule, i) => {
    switch (rule.type) {
      case 'landed':
        if (!write.replaced && write.value !== null) events.push(event(i, null));
        return;
      case 'revision':
        if (write.replaced && (write.value === null || changedBy(write.previous!, write.value) >= rule.minAbsPercent))
          events.push(event(i, write.previous));
        return;
      case 'threshold': {
        if (write.value === null) return;
        const before = write.replaced ? write.previous : write.dayBefore;
        if (
          meets(Number(write.value), rule.op, rule.value) &&
          !(before !== null && meets(Number(before), rule.op, rule.value))
        )
          events.push(event(i, before));
        return;
      }
      case 'late':
        return;
    }
  });
  return events;
}

/** Events as the body's JSON array: values are the database's exact numeric text. */
export function eventsJson(events: readonly HookEvent[]): string {
  const number = (text: string | null) => text ?? 'null';
  return `[${events
    .map(
      (e) =>
        `{"rule":${e.rule},"type":"${e.type}","metric":${JSON.stringify(e.metric)},` +
        `"project":${JSON.stringify(e.project)},"date":"${e.date}","value":${number(e.value)},` +
        `"previousValue":${number(e.previousValue)},"updatedAt":"${e.updatedAt}"}`,
    )
    .join(',')}]`;
}

// Private

/** |new − old| as a percentage of |old|; any change of a zero is infinitely large. */
function changedBy(previous: string, value: string): number {
  const old = Number(previous);
  const now = Number(value);
  if (old === now) return 0;
  return old === 0 ? Number.POSITIVE_INFINITY : (Math.abs(now - old) / Math.abs(old)) * 100;
}

function meets(value: number, op: ThresholdOp, threshold: number): boolean {
  switch (op) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
  }
}

/**
 * The value a write replaced is the history row whose span ended at the write's time
 * (migration 0007); none means the day was not served before. The day before, as of the
 * write, is the latest earlier day served then: the current row when it was written by
 * then, or the history row whose span covers the write.
 */
const FEED_SQL = `
select pc.seq::text as seq, m.name as metric, p.slug, pc.day::text as day,
  trim_scale(pc.value)::text as value,
  prev.value is not null as replaced, trim_scale(prev.value)::text as previous,
  trim_scale(prior_day.value)::text as "dayBefore",
  to_char(pc.written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "writtenAt"
from point_change pc
join project p on p.id = pc.project_id
join metric m on m.id = p.metric_id
left join lateral (
  select h.value from point_history h
  where h.project_id = pc.project_id and h.day = pc.day and h.valid_to = pc.written_at
  order by h.valid_from desc limit 1) prev on true
left join lateral (
  select b.value from (
    (select c.day, c.value from point c
      where $5 and c.project_id = pc.project_id and c.day < pc.day and c.written_at <= pc.written_at
      order by c.day desc limit 1)
    union all
    (select h.day, h.value from point_history h
      where $5 and h.project_id = pc.project_id and h.day < pc.day
        and h.valid_from <= pc.written_at and h.valid_to > pc.written_at
      order by h.day desc limit 1)) b
  order by b.day desc limit 1) prior_day on true
where pc.seq > $1::bigint and pc.seq <= $2::bigint
  and ($3::text[] is null or m.name = any($3::text[]))
  and ($4::text[] is null or p.slug = any($4::text[]))
order by pc.seq`;
