import type { Catalog } from '../catalog/load-catalog.js';
import { fromEpochDay } from '../dates.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Queryable } from '../db/store.js';
import { hookCursor } from './hook-queries.js';
import { eventsJson, type HookEvent } from './hook-events.js';
import type { HookFilter, HookRule } from './hook-input.js';
import { generateMessageId } from './hook-signing.js';

/**
 * The latest day whose data is overdue at `now` under a late rule: day D is due by
 * `expectedBy` (UTC) on day D + 1, plus `graceMinutes`.
 */
export function lateDay(now: Date, expectedBy: string, graceMinutes: number): string {
  const [hours, minutes] = expectedBy.split(':').map(Number) as [number, number];
  const offsetMs = ((hours * 60 + minutes + graceMinutes) * 60 + 86_400) * 1000;
  return fromEpochDay(Math.floor((now.getTime() - offsetMs) / 86_400_000));
}

/**
 * Checks the late rules of one hook at `now` (the service's clock) and queues one delivery
 * of what is late: for each late rule and series the filter lets through, the latest overdue
 * day when it has not landed, once per rule, series and day (recorded in hook_late_fired in
 * the same transaction, so two instances cannot both send it). Only series that stored a
 * day in the 30 before count: one that stopped long ago is not late every day. Returns the
 * events queued.
 */
export async function checkLateRules(
  tx: Queryable,
  hook: { id: string; filter: HookFilter; rules: readonly HookRule[]; afterSeq: string },
  catalog: Catalog,
  directory: ProjectDirectory,
  now: Date,
): Promise<number> {
  const candidates: { rule: number; project: number; day: string; metric: string; slug: string }[] = [];
  hook.rules.forEach((rule, index) => {
    if (rule.type !== 'late') return;
    for (const metric of catalog.metrics) {
      if (hook.filter.metrics !== undefined && !hook.filter.metrics.includes(metric.name)) continue;
      const day = lateDay(now, metric.expectedBy, rule.graceMinutes);
      for (const slug of metric.projects) {
        if (hook.filter.projects !== undefined && !hook.filter.projects.includes(slug)) continue;
        const project = directory.idOf(metric.name, slug);
        if (project !== undefined) candidates.push({ rule: index, project, day, metric: metric.name, slug });
      }
    }
  });
  if (candidates.length === 0) return 0;
  const fired = await tx.query<{ rule: number; project: number; day: string }>(
    `insert into hook_late_fired (hook_id, rule, project_id, day)
     select $1, c.rule, c.project, c.day::date
     from jsonb_to_recordset($2::text::jsonb) as c (rule integer, project integer, day text)
     where not exists (select 1 from point p where p.project_id = c.project and p.day = c.day::date)
       and exists (select 1 from point p where p.project_id = c.project
                   and p.day between c.day::date - 30 and c.day::date - 1)
     on conflict do nothing
     returning rule, project_id as project, day::text as day`,
    [hook.id, JSON.stringify(candidates)],
  );
  if (fired.length === 0) return 0;
  const at = now.toISOString().replace('Z', '000Z');
  const events: HookEvent[] = fired.map((f) => {
    const c = candidates.find((x) => x.rule === f.rule && x.project === f.project)!;
    return {
      rule: f.rule,
      type: 'late',
      metric: c.metric,
      project: c.slug,
      date: f.day,
      value: null,
      previousValue: null,
      updatedAt: at,
    };
  });
  await tx.query(`insert into hook_delivery (hook_id, id, cursor, events) values ($1, $2, $3, $4)`, [
    hook.id,
    generateMessageId(),
    hookCursor(hook.afterSeq),
    eventsJson(events),
  ]);
  return events.length;
}
