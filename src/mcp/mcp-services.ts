import type { Logger } from 'pino';
import type { Catalog } from '../catalog/load-catalog.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Store } from '../db/store.js';
import type { RouteCall } from '../http/route.js';
import type { StoredSpans } from '../limits/stored-spans.js';
import type { RevisionProfiles } from '../revisions/revision-profiles.js';

/** A REST answer as its client would get it, uncompressed. */
export interface RestAnswer {
  status: number;
  headers: Readonly<Record<string, string | string[] | number | undefined>>;
  body: Buffer;
}

/**
 * Runs `GET <pathAndQuery>` of the REST API in-process with the caller's key: REST's own
 * route, key check, pricing, response cache and errors, without a socket. The app hands
 * it over (MCP imports nothing of `rest/`).
 */
export type RunRest = (pathAndQuery: string, key: string, remoteAddress: string | undefined) => Promise<RestAnswer>;

/** What `/mcp` uses of the app's services. */
export interface McpServices {
  catalog: Catalog;
  clock: () => Date;
  /** Where data reads go: a healthy replica, or the store (as REST reads). */
  reads: Store;
  state: { readonly stopping: boolean; readonly directory: ProjectDirectory | undefined };
  storedSpans: StoredSpans;
  /** Whether a metric's revision profile is kept, which `explain_metric`'s price depends on. */
  revisionProfiles: Pick<RevisionProfiles, 'isKept'>;
  logger: Logger;
}

/** One `/mcp` request. */
export type McpCall = RouteCall<McpServices>;
