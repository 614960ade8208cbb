import type { ResponseCache } from '../cache/response-cache.js';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Store } from '../db/store.js';
import type { RouteCall } from '../http/route.js';
import type { StoredSpans } from '../limits/stored-spans.js';
import type { UsageCounter } from '../limits/usage-counter.js';
import type { RevisionProfiles } from '../revisions/revision-profiles.js';

/** What the `/v1` routes use of the app's services (the app hands them all of its own). */
export interface RestServices {
  catalog: Catalog;
  config: Pick<Config, 'cacheMaxAgeSeconds' | 'stalledClientSeconds' | 'hooksAllowPrivate'>;
  /** The primary: where writes (hooks) go. */
  store: Store;
  /** The webhook deliverer, told when a hook has new work. */
  hooks: { wake(): void };
  /** Where data reads go: a healthy replica, or the store. */
  reads: Store;
  clock: () => Date;
  state: { readonly stopping: boolean; readonly directory: ProjectDirectory | undefined };
  storedSpans: StoredSpans;
  revisionProfiles: RevisionProfiles;
  responseCache: ResponseCache;
  /** Each key's spend per hour (`/v1/usage`). */
  usage: Pick<UsageCounter, 'read'>;
}

/** One `/v1` request. */
export type RestCall = RouteCall<RestServices>;
