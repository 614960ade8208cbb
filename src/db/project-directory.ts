import type { Queryable } from './store.js';
import { loadProjectIds, projectKey } from './sync-catalog.js';

/** Maps a metric's slug to its project row id; loaded once after the catalog sync. */
export interface ProjectDirectory {
  idOf(metric: string, slug: string): number | undefined;
  /** The metric and slug of a project row id (a notification names the row). */
  projectOf(id: number): { metric: string; slug: string } | undefined;
}

export async function loadProjectDirectory(db: Queryable): Promise<ProjectDirectory> {
  const ids = await loadProjectIds(db);
  const byId = new Map(
    [...ids].map(([key, id]) => {
      const slash = key.indexOf('/');
      return [id, { metric: key.slice(0, slash), slug: key.slice(slash + 1) }];
    }),
  );
  return { idOf: (metric, slug) => ids.get(projectKey(metric, slug)), projectOf: (id) => byId.get(id) };
}
