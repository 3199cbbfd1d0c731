import postgres from "postgres";
import { ADMIN_URL } from "./helpers/db";

// A database outage for one server only: its database refuses new connections and every open one
// is cut (pg_terminate_backend), while the Postgres server and the other tests' databases run on.
// What the server sees is what a restarted or unreachable database looks like to it.
export async function databaseOutage(dbUrl: string, downMs: number): Promise<{ terminated: number }> {
  const name = new URL(dbUrl).pathname.slice(1);
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`alter database "${name.replaceAll('"', '""')}" allow_connections false`);
    const cut = await admin<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
    await new Promise((r) => setTimeout(r, downMs));
    return { terminated: cut.filter((r) => r.ok).length };
  } finally {
    await admin.unsafe(`alter database "${name.replaceAll('"', '""')}" allow_connections true`);
    await admin.end({ timeout: 5 });
  }
}

/** Whether a task import into `dbUrl`'s database is inside its transaction (an open write on the task tables). */
export async function importTransactionOpen(dbUrl: string): Promise<boolean> {
  const name = new URL(dbUrl).pathname.slice(1);
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = ${name} and backend_xid is not null and query ilike '%tasks%'`;
    return (row?.n ?? 0) > 0;
  } finally {
    await admin.end({ timeout: 5 });
  }
}
