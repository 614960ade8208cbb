import { readdir, readFile } from 'node:fs/promises';
import { PACKAGE_ROOT } from '../package-root.js';
import type { Queryable, Store } from './store.js';

/** Where the ordered `NNNN_name.sql` files live. */
const MIGRATIONS_DIR = new URL('db/migrations/', PACKAGE_ROOT);

/** An arbitrary constant shared by every instance, so they take turns applying migrations. */
const MIGRATION_LOCK_KEY = 7_264_001;

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies the migrations not yet recorded, in file-name order, each exactly once.
 * The whole run is one transaction under an advisory lock: a second instance starting
 * at the same moment waits, then finds nothing left to do.
 */
export async function migrate(store: Store): Promise<MigrationResult> {
  const files = await listMigrations();
  return store.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`create table if not exists schema_migration (
      version text primary key,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set(
      (await tx.query<{ version: string }>('select version from schema_migration')).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const file of files.filter((f) => !done.has(f))) {
      await applyOne(tx, file);
      applied.push(file);
    }
    return { applied };
  });
}

/** The migrations on disk that the database has not recorded; empty when it is up to date. */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const files = await listMigrations();
  const rows = await db.query<{ version: string }>(
    `select version from schema_migration where version = any($1::text[])`,
    [files],
  );
  const done = new Set(rows.map((r) => r.version));
  return files.filter((f) => !done.has(f));
}

// Private

async function listMigrations(): Promise<string[]> {
  const names = await readdir(MIGRATIONS_DIR);
  return names.filter((n) => /^\d{4}_[a-z0-9_]+\.sql$/.test(n)).sort();
}

async function applyOne(tx: Queryable, file: string): Promise<void> {
  const script = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
  try {
    await tx.exec(script);
  } catch (cause) {
    throw new Error(`migration ${file} failed: ${(cause as Error).message}`, { cause });
  }
  await tx.query('insert into schema_migration (version) values ($1)', [file]);
}
