import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openPglite } from '../../src/db/open-pglite.js';
import { openPostgres } from '../../src/db/open-postgres.js';
import type { Store } from '../../src/db/store.js';
import { UNDER_CI } from './ci.js';

/** The real server the suite may use; unset means those tests are skipped (never under CI). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

if (TEST_DATABASE_URL === undefined && UNDER_CI) {
  throw new Error('TEST_DATABASE_URL must be set under CI: the real-PostgreSQL tests may not be skipped');
}

/** A database made for one test file on the real server, dropped by `drop()`. */
export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates a uniquely named database on the TEST_DATABASE_URL server. */
export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `metrics_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop database if exists ${name} with (force)`);
      await sql.end();
    },
  };
}

/** A store under test and how to dispose of it. */
export interface StoreUnderTest {
  store: Store;
  /** For a server store, its connection URL (for opening a second client). */
  url?: string;
  dispose(): Promise<void>;
}

export interface StoreKind {
  name: 'pglite' | 'postgres';
  /** False when no server is configured; the describe block is then skipped. */
  available: boolean;
  open(): Promise<StoreUnderTest>;
}

/** The two stores every data-path test runs against. */
export const STORE_KINDS: readonly StoreKind[] = [
  {
    name: 'pglite',
    available: true,
    open: async () => {
      const store = await openPglite('memory://');
      return { store, dispose: () => store.close() };
    },
  },
  {
    name: 'postgres',
    available: TEST_DATABASE_URL !== undefined,
    open: async () => {
      const db = await createScratchDatabase(TEST_DATABASE_URL!);
      const store = openPostgres({ url: db.url, poolSize: 4, statementTimeoutSeconds: 5, connectTimeoutSeconds: 5 });
      return {
        store,
        url: db.url,
        dispose: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];
