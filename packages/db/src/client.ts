import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { sql, type SQL } from "drizzle-orm";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import * as schema from "./schema";
import { tryEmbeddedLead, tryPostgresLead, type TryLead } from "./leadership";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
// A transaction handle is a Db for query functions: they take `(db, params)` and never care which.
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type Database = {
  db: Db;
  driver: "pglite" | "postgres";
  /**
   * LISTEN on a channel; resolves to the unlisten function. postgres-js listens on a dedicated
   * connection that it re-establishes (and re-LISTENs) by itself; notifications sent while it was
   * away are lost, which is why the consumers keep a slow sweep.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** One attempt at the background loops' leadership (leadership.ts); PGlite: always granted. */
  tryLead: TryLead;
  /** Applies the checked-in migrations with the driver's own migrator (it needs the driver-typed handle). */
  migrate(): Promise<void>;
  close(): Promise<void>;
};

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../drizzle", import.meta.url));

export type OpenOptions = {
  /** postgres:// URL; when absent the embedded PGlite database under `dataDir` is used. */
  url?: string;
  /** PGlite data directory (created if missing); "memory://" for an in-memory database. */
  dataDir?: string;
  /** postgres-js pool size. */
  maxConnections?: number;
};

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.url) {
    const url = opts.url;
    const { default: postgres } = await import("postgres");
    const client = postgres(url, { max: opts.maxConnections ?? 10, onnotice: () => {} });
    const pg = drizzlePostgres(client, { schema });
    const db: Db = pg;
    return {
      db,
      driver: "postgres",
      migrate: () => migratePostgres(pg, { migrationsFolder: MIGRATIONS_DIR }),
      listen: async (channel, onPayload) => (await client.listen(channel, onPayload)).unlisten,
      tryLead: (key, checkMs) => tryPostgresLead(url, key, checkMs),
      close: () => client.end({ timeout: 5 }),
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const dataDir = opts.dataDir ?? "memory://";
  if (!dataDir.startsWith("memory://")) mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir);
  const lite = drizzlePglite(client, { schema });
  const db: Db = lite;
  return {
    db,
    driver: "pglite",
    migrate: () => migratePglite(lite, { migrationsFolder: MIGRATIONS_DIR }),
    listen: async (channel, onPayload) => {
      const unlisten = await client.listen(channel, onPayload);
      return () => unlisten();
    },
    tryLead: tryEmbeddedLead,
    close: () => client.close(),
  };
}

/** Applies the checked-in migrations in /drizzle; idempotent. */
export async function migrateDatabase(database: Database): Promise<void> {
  await database.migrate();
}

/** Runs raw SQL and returns rows, hiding the drivers' different result shapes. */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const res = (await db.execute(query)) as unknown;
  if (Array.isArray(res)) return res as T[];
  return ((res as { rows?: T[] }).rows ?? []) as T[];
}

export async function ping(db: Db): Promise<boolean> {
  const rows = await queryRows<{ ok: number }>(db, sql`select 1 as ok`);
  return rows[0]?.ok === 1;
}
