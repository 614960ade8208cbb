import { loadConfig, type Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { openStore } from '../db/open-store.js';
import type { Store } from '../db/store.js';

/**
 * Opens the store the server would use (DATABASE_URL, else PGLITE_DIR), brought up to
 * date, runs `work`, and closes it. Errors print as one line and exit 1, without a trace.
 */
export async function withCliStore(work: (store: Store, config: Config) => Promise<number | void>): Promise<void> {
  try {
    const config = loadConfig();
    const store = await openStore(config);
    try {
      await migrate(store);
      process.exitCode = (await work(store, config)) ?? 0;
    } finally {
      await store.close();
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
