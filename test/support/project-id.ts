import type { Queryable } from '../../src/db/store.js';

/** The id of project `slug` of `metric`, read from the store; throws when the store has no such project. */
export async function projectId(db: Pick<Queryable, 'query'>, metric: string, slug: string): Promise<number> {
  const rows = await db.query<{ id: number }>(
    'select p.id from project p join metric m on m.id = p.metric_id where m.name = $1 and p.slug = $2',
    [metric, slug],
  );
  if (rows[0] === undefined) throw new Error(`the store has no project ${slug} of ${metric}`);
  return Number(rows[0].id);
}

/** The ids of every project of `metric` by slug, in the catalog's order. */
export async function projectIds(db: Pick<Queryable, 'query'>, metric: string): Promise<Map<string, number>> {
  const rows = await db.query<{ id: number; slug: string }>(
    'select p.id, p.slug from project p join metric m on m.id = p.metric_id where m.name = $1 order by p.position',
    [metric],
  );
  return new Map(rows.map((r) => [r.slug, Number(r.id)]));
}
