import type { Logger } from 'pino';
import type { KeyVerifier } from '../auth/api-keys.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Store } from '../db/store.js';
import type { AnswerBudget } from '../limits/answer-budget.js';
import type { PageLoadLimit } from '../limits/page-loads.js';
import type { StoredSpans } from '../limits/stored-spans.js';
import type { UsageCounter } from '../limits/usage-counter.js';
import type { RevisionProfiles } from '../revisions/revision-profiles.js';
import type { SeriesUpdates } from '../live/series-updates.js';

/** What `/graphql` and its resolvers use of the app's services (the app hands them all of its own). */
export interface GraphqlServices {
  catalog: Catalog;
  config: Pick<Config, 'graphiql' | 'hooksAllowPrivate'>;
  /** The primary: where writes (hooks) go. */
  store: Store;
  /** The webhook deliverer, told when a hook has new work. */
  hooks: { wake(): void };
  /** Where data reads go: a healthy replica, or the store. */
  reads: Store;
  logger: Logger;
  clock: () => Date;
  state: {
    readonly stopping: boolean;
    readonly directory: ProjectDirectory | undefined;
    /** The last stored month of a series everyone has, for GraphiQL's first query. */
    readonly example: { from: string; to: string } | undefined;
  };
  keys: KeyVerifier;
  seriesUpdates: SeriesUpdates;
  storedSpans: StoredSpans;
  revisionProfiles: RevisionProfiles;
  answerBudget: AnswerBudget;
  /** Loads of GraphiQL's page and its files per client address. */
  graphiqlLoads: PageLoadLimit;
  responseCache: ResponseCache;
  /** Each key's spend per hour (the `usage` field). */
  usage: Pick<UsageCounter, 'read'>;
}
