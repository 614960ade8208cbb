import type { Queryable } from './store.js';
import { loadProjectIds, projectKey } from './sync-catalog.js';

/** Maps a metric's slug to its project row id; loaded once after the catalog sync. */
export interface ProjectDirectory {
  idOf(metric: string, slug: string): number | undefined;
}

export async function loadProjectDirectory(db: Queryable): Promise<ProjectDirectory> {
  const ids = await loadProjectIds(db);
  return { idOf: (metric, slug) => ids.get(projectKey(metric, slug)) };
}
