import type { Catalog } from '../catalog/load-catalog.js';
import type { Queryable } from './store.js';

/**
 * Makes the metric and project tables match the catalog file. Rows are upserted and
 * never deleted: a slug taken out of the catalog keeps its data but is no longer served.
 *
 * Writers call this inside their transaction before they take their turn to write, so it
 * must lock no row it leaves as it is: a writer holding the turn updates its series'
 * project rows (updated_at), and waiting for it while holding one of them would deadlock.
 * `on conflict do update … where` locks every conflicting row even when the condition
 * is false, so new rows are inserted with `do nothing` and only rows that differ are
 * updated (a catalog edit, once, at the first start after it).
 */
export async function syncCatalog(db: Queryable, catalog: Catalog): Promise<void> {
  const metrics = catalog.metrics;
  const metricColumns = [
    metrics.map((m) => m.name),
    metrics.map((m) => m.valueKind),
    metrics.map((m) => m.projectRequired),
  ];
  await db.query(
    `insert into metric (name, value_kind, project_required)
     select * from unnest($1::text[], $2::text[], $3::boolean[])
     on conflict (name) do nothing`,
    metricColumns,
  );
  await db.query(
    `update metric m set value_kind = x.value_kind, project_required = x.project_required
     from unnest($1::text[], $2::text[], $3::boolean[]) as x (name, value_kind, project_required)
     where m.name = x.name and (m.value_kind, m.project_required) is distinct from (x.value_kind, x.project_required)`,
    metricColumns,
  );
  const projects = metrics.flatMap((m) => m.projects.map((slug, position) => ({ metric: m.name, slug, position })));
  const projectColumns = [projects.map((p) => p.metric), projects.map((p) => p.slug), projects.map((p) => p.position)];
  await db.query(
    `insert into project (metric_id, slug, position)
     select m.id, x.slug, x.position
     from unnest($1::text[], $2::text[], $3::smallint[]) as x (metric, slug, position)
     join metric m on m.name = x.metric
     on conflict (metric_id, slug) do nothing`,
    projectColumns,
  );
  await db.query(
    `update project p set position = x.position
     from unnest($1::text[], $2::text[], $3::smallint[]) as x (metric, slug, position)
     join metric m on m.name = x.metric
     where p.metric_id = m.id and p.slug = x.slug and p.position is distinct from x.position`,
    projectColumns,
  );
}

/** Project ids keyed by `metric/slug`, for writers that insert points. */
export async function loadProjectIds(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ metric: string; slug: string; id: number }>(
    `select m.name as metric, p.slug, p.id
     from project p join metric m on m.id = p.metric_id`,
  );
  return new Map(rows.map((r) => [projectKey(r.metric, r.slug), r.id]));
}

export function projectKey(metric: string, slug: string): string {
  return `${metric}/${slug}`;
}
