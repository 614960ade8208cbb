import { loadConfig, type Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { openStore } from '../db/open-store.js';
import type { Store } from '../db/store.js';

/**
 * Opens the store the server would use (DATABASE_URL, else PGLITE_DIR), brought up to
 * date, runs `work`, and closes it. Resolves to the exit code: `work`'s (0 when it
 * returns nothing), or 1 after printing a failure as one line, without a trace.
 */
export async function withCliStore(work: (store: Store, config: Config) => Promise<number | void>): Promise<number> {
  try {
    const config = loadConfig();
    const store = await openStore(config);
    try {
      await migrate(store).catch((cause: Error) => {
        throw new Error(`cannot prepare ${store.description}: ${cause.message}`, { cause });
      });
      return (await work(store, config)) ?? 0;
    } finally {
      await store.close();
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
}
