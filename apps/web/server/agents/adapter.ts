import { createAdapter } from "@socket.io/postgres-adapter";
import pg from "pg";
import type { Logger } from "../logger";

// Several web instances behind one URL: an agent's socket lives on one of them, but a job may be
// enqueued (or canceled) through any. socket.io's Postgres adapter relays every broadcast and room
// emit over LISTEN/NOTIFY, so "jobs available" and "cancel" reach the agent wherever it is
// connected. Only with a real Postgres (DATABASE_URL); the embedded PGlite is one process anyway
// and keeps socket.io's in-memory adapter.

export type SocketAdapter = {
  adapter: ReturnType<typeof createAdapter>;
  /** Ends the adapter's connections; call after io.close() (which closes the adapter itself). */
  close(): Promise<void>;
};

// Payloads over NOTIFY's 8000-byte limit, or binary ones, travel through this table (the library's
// format; ours are a few hundred bytes, so it stays empty in practice, but its cleanup query runs).
const TABLE = "socket_io_attachments";

export function postgresSocketAdapter(url: string, log: Logger): SocketAdapter {
  const alog = log.child({ component: "socket-adapter" });
  // One connection stays LISTENing; the others publish. A lost connection is reconnected by the adapter.
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", (err) => alog.error({ err }, "socket adapter connection failed"));
  pool
    .query(
      `create table if not exists ${TABLE} (id bigserial unique, created_at timestamptz default now(), payload bytea)`,
    )
    .catch((err: unknown) => alog.error({ err }, "creating the socket adapter's table failed"));
  return {
    adapter: createAdapter(pool, {
      tableName: TABLE,
      errorHandler: (err) => alog.error({ err }, "socket adapter error"),
    }),
    close: () => pool.end(),
  };
}
