import type { ProjectDirectory } from '../db/project-directory.js';
import type { ReadRouter } from '../db/read-replicas.js';
import type { Store } from '../db/store.js';
import type { RouteCall } from '../http/route.js';
import type { ServiceMetrics } from './prometheus.js';

/** What the operators' routes (`/healthz`, `/readyz`, `/metrics`) use of the app's services. */
export interface OpsServices {
  store: Store;
  replicas: ReadRouter | undefined;
  state: { readonly stopping: boolean; readonly directory: ProjectDirectory | undefined };
  metrics: ServiceMetrics;
}

/** One request to an operators' route. */
export type OpsCall = RouteCall<OpsServices>;
