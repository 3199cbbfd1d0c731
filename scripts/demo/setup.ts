// What every demo run shares: the embedded database in the demo's data dir, the app, the built-in
// learnable pool and its frozen split, the tiny warmed base (cached outside the clone), a local
// agent, the demo's admin and the reference oracle.
import { join } from "node:path";
import { getPool, migrateDatabase, openDatabase, referenceOracle, schema } from "@agentlab/db";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { createApp } from "../../apps/web/server/app";
import { ensureBuiltinPool, LEARNABLE_POOL_NAME } from "../../apps/web/server/bootstrap/builtin-pool";
import { startLocalAgent } from "../../apps/web/server/bootstrap/local-agent";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildWarmBase, learnableSplit } from "../learning-proof";
import { ROOT, say } from "./options";

export async function demoSetup(dataDir: string) {
  const env = {
    ...loadEnv(),
    NODE_ENV: "production" as const,
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "warn" as const,
    AGENTLAB_LOCAL_AGENT: "1" as const,
  };
  say(`data dir ${dataDir}`);
  const database = await openDatabase({ dataDir: join(dataDir, "db") });
  await migrateDatabase(database);
  const db = database.db;
  const app = await createApp({
    env,
    db,
    log: createLogger(env.LOG_LEVEL),
    secret: "demo-secret-demo-secret-demo-secret-0123",
  });
  const url = `http://127.0.0.1:${await app.listen(0)}`;
  await ensureBuiltinPool(app.services);
  const pool = await getPool(db, { name: LEARNABLE_POOL_NAME });
  if (!pool) throw new Error("the learnable built-in pool did not load");
  const { split, train, test } = await learnableSplit(db, pool.id);
  say(`synthetic learnable pool: frozen split ${JSON.stringify(split.counts)} (one task per source group)`);
  const python = findPython(null, { root: join(ROOT, "apps/agent") });
  // Built once per recipe into the machine's cache outside the clone (AGENTLAB_CACHE_DIR): the
  // warm-up is most of a first run's wall time on 2 cores.
  const tiny = await buildWarmBase({ python, train });
  const warm = tiny.warmup;
  if (!warm) throw new Error("the tiny base was not warmed up");
  say(
    `tiny base${tiny.cached ? " (cached)" : ""}: ${tiny.parameters} parameters, vocab ${tiny.vocab_size}; warm-up on ${warm.samples} samples of ${warm.task_ids.length} TRAIN tasks only (${warm.steps} steps, loss ${String(warm.final_loss)}, data sha256 ${warm.dataset_sha256.slice(0, 12)}): ${warm.description}`,
  );
  const baseNote = ` Base: ${tiny.parameters}-parameter tiny model, warm-up data sha256 ${warm.dataset_sha256} (${warm.samples} samples of ${warm.task_ids.length} train tasks: echo, and the repairs of a quarter of the shapes; ${warm.steps} steps).`;
  const agent = await startLocalAgent(app.services, url, {
    PATH: env.PATH ?? "",
    HOME: env.HOME ?? "",
    AGENTLAB_PYTHON: python,
    AGENTLAB_CONCURRENCY: "2",
  });
  // The demo's admin and teacher from an earlier run of this data dir, else new ones.
  const [admin] = await db
    .insert(schema.users)
    .values({ email: "demo@agentlab.local", name: "Demo", passwordHash: "!", role: "admin" })
    .onConflictDoUpdate({ target: schema.users.email, set: { name: "Demo" } })
    .returning();
  const oracle = await referenceOracle(db, { create: true });
  if (!oracle) throw new Error("no reference oracle");
  return { database, db, app, split, train, test, tiny, baseNote, agent, adminId: admin?.id ?? null, oracle };
}

export type DemoWorld = Awaited<ReturnType<typeof demoSetup>>;
