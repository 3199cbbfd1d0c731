import postgres from "postgres";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_DIR, migrateDatabase, openDatabase, type Database } from "@agentlab/db";

// Each test file gets its own migrated database on the real Postgres, so files run in parallel
// without sharing state. Migrating takes ≈ 1.9 s a database; cloning an already migrated one with
// `CREATE DATABASE … TEMPLATE` ≈ 0.1 s. So the migrations run once per schema into a template
// named by the hash of drizzle/ (a new migration gives a new template), and every file clones it.
// TEST_DATABASE_URL points at any database of the server.
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/postgres";

export type TestDb = Database & { url: string; drop(): Promise<void> };

/** The hash of every migration file and the journal: equal hashes, equal migrated schemas. */
function schemaHash(): string {
  const h = createHash("sha256");
  const files = [
    ...readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith(".sql"))
      .sort(),
    "meta/_journal.json",
  ];
  for (const f of files)
    h.update(f)
      .update("\0")
      .update(readFileSync(join(MIGRATIONS_DIR, f)))
      .update("\0");
  return h.digest("hex").slice(0, 16);
}

const TEMPLATE = `agentlab_tpl_${schemaHash()}`;
// pg_advisory_lock key for building templates: workers of one run (and other runs on the same
// server) start at once and must not migrate the same template twice.
const TEMPLATE_LOCK = 7_311_020_601;

const dbUrl = (name: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

let templateReady: Promise<void> | null = null;

/** Makes sure the migrated template of this schema exists (built under the lock, published by a rename). */
function ensureTemplate(admin: postgres.Sql): Promise<void> {
  templateReady ??= (async () => {
    const exists = async () =>
      (await admin`select 1 from pg_database where datname = ${TEMPLATE}`.then((r) => r.length)) > 0;
    if (await exists()) return;
    // A session lock on a reserved connection: CREATE DATABASE cannot run in a transaction, and
    // the lock goes with the connection if this process dies.
    const conn = await admin.reserve();
    try {
      await conn`select pg_advisory_lock(${TEMPLATE_LOCK})`;
      if (await exists()) return;
      // Built under a temporary name and renamed when complete, so a template that exists is
      // fully migrated even if a run was killed half-way (its leftover is dropped next time).
      const building = `${TEMPLATE}_building`;
      await conn.unsafe(`drop database if exists ${building} with (force)`);
      await conn.unsafe(`create database ${building}`);
      const database = await openDatabase({ url: dbUrl(building), maxConnections: 1 });
      try {
        await migrateDatabase(database);
      } finally {
        await database.close();
      }
      await conn.unsafe(`alter database ${building} rename to ${TEMPLATE}`);
    } finally {
      await conn`select pg_advisory_unlock(${TEMPLATE_LOCK})`.catch(() => {});
      conn.release();
    }
  })().catch((err: unknown) => {
    templateReady = null;
    throw err;
  });
  return templateReady;
}

/**
 * A fresh database for one test file: a clone of the migrated template of this schema, or of
 * `template` (a database built from that one, e.g. the e2e project's with the built-in pools).
 */
export async function createTestDatabase(opts: { template?: string } = {}): Promise<TestDb> {
  const name = `agentlab_t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(ADMIN_URL, { max: 2, onnotice: () => {} });
  await ensureTemplate(admin);
  await admin.unsafe(`create database ${name} template ${opts.template ?? TEMPLATE}`);
  const url = dbUrl(name);
  const database = await openDatabase({ url, maxConnections: 20 });
  // A no-op on the clone (its migrations table is the template's); kept so a clone is exactly
  // what `npm start` would see after migrating.
  await migrateDatabase(database);
  return {
    ...database,
    url,
    async drop() {
      await database.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/**
 * A template of one run: the schema's template plus what `seed` writes (through a connection
 * that is closed before the database is cloned). Dropped by the returned function.
 */
export async function createSeededTemplate(
  label: string,
  seed: (database: Database) => Promise<void>,
): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `agentlab_tpl_${label}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(ADMIN_URL, { max: 2, onnotice: () => {} });
  const drop = async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  try {
    await ensureTemplate(admin);
    await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
    const database = await openDatabase({ url: dbUrl(name), maxConnections: 5 });
    try {
      await seed(database);
    } finally {
      await database.close();
    }
  } catch (err) {
    await drop();
    throw err;
  }
  return { name, drop };
}
