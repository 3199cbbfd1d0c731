// `npm run demo`: the learning proof, headless, on the embedded database (PGlite) and a
// local agent. The synthetic "learnable" pool (built in) → a frozen split by source group → a tiny
// base built here (tokenizer and echo warm-up from train tasks only) → two experiments:
//   main:    the reference teacher's fixes of the train tasks → LoRA → dev selection → one test run;
//   control: the same prompts with answers shuffled across train tasks, so the adapter cannot help.
//   A/A:     the main's selected adapter against itself, two sampling seeds at T = 0.7, on the same
//            test tasks and with the report's clustered statistics: the noise floor, never significant
//            but by the rule's α.
// The base is warmed up on the train repairs of a quarter of the shapes, meant to start above 0% of
// test so that a control can regress (measured at 0%: see cpuDemoWarmupSamples in core).
// Each report's own significance rule decides. Tasks and model are synthetic: nothing here is about
// real models. The last line is one JSON object naming the three reports' JSON files.
// The pieces: options.ts (settings), run-experiment.ts (recipe, main and control), aa-control.ts,
// output.ts (the summary and the JSON line).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createShareLink, getPool, referenceOracle, migrateDatabase, openDatabase, schema } from "@agentlab/db";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { createApp } from "../../apps/web/server/app";
import { ensureBuiltinPool, LEARNABLE_POOL_NAME } from "../../apps/web/server/bootstrap/builtin-pool";
import { startLocalAgent } from "../../apps/web/server/bootstrap/local-agent";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildWarmBase, learnableSplit } from "../learning-proof";
import { withCacheLock } from "../tiny-base-cache";
import { aaControl, type AaControl } from "./aa-control";
import { DEMO_DIR, DEMO_DPO, DEMO_GRPO, ROOT, say, t0 } from "./options";
import { printDemoEnd } from "./output";
import { runExperiments } from "./run-experiment";

async function main() {
  const dataDir = DEMO_DIR;
  const runDir = join(dataDir, "runs", new Date().toISOString().replace(/[:.]/g, "-"));
  await mkdir(runDir, { recursive: true });
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
  const provider = await referenceOracle(db, { create: true });
  if (!provider) throw new Error("no reference oracle");

  let reports: Awaited<ReturnType<typeof runExperiments>>;
  let aa: AaControl | null = null;
  try {
    reports = await runExperiments(
      app.services,
      { splitId: split.id, providerId: provider.id, basePath: tiny.path, baseNote },
      admin?.id ?? null,
      runDir,
    );
    // The A/A's generate jobs run on the agent too (it fetches the adapter from the store), so it stops after them.
    if (!DEMO_DPO && !DEMO_GRPO) aa = await aaControl(app.services, reports.main.body, test, runDir);
  } finally {
    await agent.stop();
  }
  const { main: mainReport, control } = reports;
  const { token } = await createShareLink(db, {
    reportId: mainReport.id,
    label: "demo",
    createdBy: admin?.id ?? null,
  });
  await app.close();
  await database.close();
  const wallSeconds = Math.round((Date.now() - t0) / 1000);
  say(`finished in ${wallSeconds} s`);
  printDemoEnd({
    wallSeconds,
    baseCached: tiny.cached,
    dataDir,
    main: mainReport,
    control,
    aa,
    shareToken: token,
  });
}

// PGlite is one process's database: two demos at once take turns.
withCacheLock(DEMO_DIR, main).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
