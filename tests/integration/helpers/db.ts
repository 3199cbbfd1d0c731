import postgres from "postgres";
import { randomBytes } from "node:crypto";
import { migrateDatabase, openDatabase, type Database } from "@agentlab/db";

// Each test file gets its own freshly migrated database on the real Postgres, so files run in
// parallel without sharing state. TEST_DATABASE_URL points at any database of the server.
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/postgres";

export type TestDb = Database & { url: string; drop(): Promise<void> };

export async function createTestDatabase(): Promise<TestDb> {
  const name = `agentlab_t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), maxConnections: 20 });
  await migrateDatabase(database);
  return {
    ...database,
    url: url.toString(),
    async drop() {
      await database.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
