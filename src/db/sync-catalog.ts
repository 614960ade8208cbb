import type { Catalog } from '../catalog/load-catalog.js';
import type { Queryable } from './store.js';

/**
 * Makes the metric and project tables match the catalog file. Rows are upserted and
 * never deleted: a slug taken out of the catalog keeps its data but is no longer served.
 */
export async function syncCatalog(db: Queryable, catalog: Catalog): Promise<void> {
  const metrics = catalog.metrics;
  await db.query(
    `insert into metric (name, value_kind, project_required)
     select * from unnest($1::text[], $2::text[], $3::boolean[])
     on conflict (name) do update
       set value_kind = excluded.value_kind, project_required = excluded.project_required
       where (metric.value_kind, metric.project_required) is distinct from (excluded.value_kind, excluded.project_required)`,
    [metrics.map((m) => m.name), metrics.map((m) => m.valueKind), metrics.map((m) => m.projectRequired)],
  );
  const projects = metrics.flatMap((m) => m.projects.map((slug, position) => ({ metric: m.name, slug, position })));
  await db.query(
    `insert into project (metric_id, slug, position)
     select m.id, x.slug, x.position
     from unnest($1::text[], $2::text[], $3::smallint[]) as x (metric, slug, position)
     join metric m on m.name = x.metric
     on conflict (metric_id, slug) do update
       set position = excluded.position
       where project.position is distinct from excluded.position`,
    [projects.map((p) => p.metric), projects.map((p) => p.slug), projects.map((p) => p.position)],
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
