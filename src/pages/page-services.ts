import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import type { Store } from '../db/store.js';
import type { RouteCall } from '../http/route.js';

/** What the human pages (`/docs`, `/explore`) use of the app's services. */
export interface PageServices {
  catalog: Catalog;
  config: Config;
  store: Store;
}

/** One request for a page. */
export type PageCall = RouteCall<PageServices>;
