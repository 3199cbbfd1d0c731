import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { migrateDatabase, openDatabase, STARTUP_LOCK_KEY, withPostgresLock } from "@agentlab/db";
import { loadEnv } from "./env";
import { createLogger } from "./logger";
import { createApp } from "./app";
import { loadOrCreateSecret } from "./bootstrap/secret";
import { startLocalAgent } from "./bootstrap/local-agent";
import { ensureBuiltinPool } from "./bootstrap/builtin-pool";
import { ensureFirstAdminLink } from "./auth/setup";

const WEB_DIR = fileURLToPath(new URL("..", import.meta.url));

async function main() {
  const env = loadEnv();
  const log = createLogger(env.LOG_LEVEL);
  const database = await openDatabase(
    env.DATABASE_URL ? { url: env.DATABASE_URL } : { dataDir: resolve(env.AGENTLAB_DATA_DIR, "db") },
  );
  // Several instances on one Postgres take turns at migrating and loading the built-in pools.
  const url = env.DATABASE_URL;
  const serialized = <T>(fn: () => Promise<T>) => (url ? withPostgresLock(url, STARTUP_LOCK_KEY, fn) : fn());
  await serialized(() => migrateDatabase(database));
  log.info({ driver: database.driver }, "database migrated");

  // An API-only instance (AGENTLAB_DASHBOARD=0) serves tRPC, the HTTP routes and the agents' socket.
  const nextApp = env.AGENTLAB_DASHBOARD === "1" ? next({ dev: env.NODE_ENV === "development", dir: WEB_DIR }) : null;
  await nextApp?.prepare();
  const secret = await loadOrCreateSecret(env.AGENTLAB_DATA_DIR, env.AGENTLAB_SECRET);
  const app = await createApp({
    env,
    db: database.db,
    log,
    secret,
    next: nextApp?.getRequestHandler(),
    listen: database.listen,
    tryLead: database.tryLead,
  });
  const port = await app.listen(env.PORT, env.HOST);
  const publicUrl = env.AGENTLAB_PUBLIC_URL ?? `http://localhost:${port}`;
  await serialized(() => ensureBuiltinPool(app.services));
  const setup = await serialized(() => ensureFirstAdminLink(app.services));
  log.info({ url: publicUrl }, "agentlab is up");
  console.log(`\n  agentlab is running at ${publicUrl}\n`);
  if (setup) console.log(`  No admin yet. Create the first admin account (one-time link):\n  ${publicUrl}${setup}\n`);

  const agent =
    env.AGENTLAB_LOCAL_AGENT === "1"
      ? await startLocalAgent(app.services, `http://127.0.0.1:${port}`, { PATH: env.PATH, HOME: env.HOME })
      : null;

  // Graceful on the first signal, forced on the second.
  let stopping = false;
  const shutdown = async (sig: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ sig }, "shutting down");
    const agentStopped = agent?.stop();
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await app.close();
    await agentStopped;
    await nextApp?.close?.();
    await database.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
