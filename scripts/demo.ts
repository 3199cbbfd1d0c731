// `npm run demo`: one experiment end to end, headless, on the embedded database (PGlite) and a
// local agent: the built-in pool → a small demo pool and frozen split → the reference teacher →
// the tiny local model, 2 seeds × 2 epochs → dev selection → one test evaluation → report.
// Prints the report's URL and writes its JSON. The tiny model is random: its numbers mean nothing.
import { createReadStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createGunzip } from "node:zlib";
import { createInterface } from "node:readline";
import { type Db, createShareLink, createSplit, getPool, importPool, insertProvider, migrateDatabase, openDatabase, reportByExperiment, schema } from "@agentlab/db";
import { reportToJson, type ExperimentReport, type TaskSpec } from "@agentlab/core";
import { and, eq } from "drizzle-orm";
import { loadEnv } from "../apps/web/server/env";
import { createLogger } from "../apps/web/server/logger";
import { createApp } from "../apps/web/server/app";
import { BUILTIN_POOL_FILE, BUILTIN_POOL_NAME, ensureBuiltinPool } from "../apps/web/server/bootstrap/builtin-pool";
import { startLocalAgent } from "../apps/web/server/bootstrap/local-agent";
import { createExperiment } from "../apps/web/server/experiments/service";
import { findPython, runPython } from "../apps/agent/src/trainer/python";

const ROOT = resolve(import.meta.dirname, "..");
const GROUPS = 24; // source groups taken from the built-in pool: ~70 tasks, split 60/20/20 by group
const DISCLAIMER =
  "Demo only: the base model is a tiny, randomly initialised model built on this machine and the teacher is the reference oracle. " +
  "These numbers say nothing about real models; they show that the pipeline runs end to end.";

const t0 = Date.now();
const say = (msg: string) => console.log(`[demo +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}`);

async function demoTasks(): Promise<TaskSpec[]> {
  const out: TaskSpec[] = [];
  const groups = new Set<string>();
  const lines = createInterface({ input: createReadStream(BUILTIN_POOL_FILE).pipe(createGunzip()) });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const t = JSON.parse(line) as TaskSpec;
    if (!groups.has(t.source_group)) {
      if (groups.size >= GROUPS) continue;
      groups.add(t.source_group);
    }
    out.push(t);
  }
  return out;
}

async function waitForExperiment(db: Db, id: string): Promise<void> {
  let last = "";
  for (;;) {
    const [row] = await db.select().from(schema.experiments).where(eq(schema.experiments.id, id));
    const stages = await db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id));
    const line = stages.map((s) => `${s.key}:${s.state}`).join(" ");
    if (line !== last) say(line);
    last = line;
    if (!row || row.state !== "running") {
      if (row?.state !== "succeeded") throw new Error(`experiment ${row?.state ?? "missing"}: ${row?.error ?? ""}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }

}

async function main() {
  const dataDir = resolve(ROOT, ".agentlab/demo", new Date().toISOString().replace(/[:.]/g, "-"));
  await mkdir(dataDir, { recursive: true });
  const env = { ...loadEnv(), NODE_ENV: "production" as const, AGENTLAB_DATA_DIR: dataDir, LOG_LEVEL: "warn" as const, AGENTLAB_LOCAL_AGENT: "1" as const };
  const log = createLogger(env.LOG_LEVEL);
  say(`data dir ${dataDir}`);
  const database = await openDatabase({ dataDir: join(dataDir, "db") });
  await migrateDatabase(database);
  const db = database.db;
  const app = await createApp({ env, db, log, secret: "demo-secret-demo-secret-demo-secret-0123" });
  const port = await app.listen(0);
  const url = `http://127.0.0.1:${port}`;
  await ensureBuiltinPool(app.services);
  if (!(await getPool(db, { name: BUILTIN_POOL_NAME }))) throw new Error("the built-in pool did not load");

  const tasks = await demoTasks();
  const jsonl = tasks.map((t) => JSON.stringify(t)).join("\n");
  const imp = await importPool(db, { name: "demo", description: `${GROUPS} source groups of the built-in pool`, lines: [new TextEncoder().encode(jsonl)] });
  if (!imp.ok) throw new Error("demo pool import failed");
  const { split } = await createSplit(db, { poolId: imp.poolId, seed: 7, devRatio: 0.2, testRatio: 0.2 });
  say(`demo pool: ${tasks.length} tasks in ${GROUPS} groups; frozen split ${JSON.stringify(split.counts)}`);

  const python = findPython(null, { root: join(ROOT, "apps/agent") });
  const model = join(dataDir, "tiny-model");
  // The tokenizer learns from the split's train tasks only (never dev/test text, issue 12).
  const trainIds = (await db.select({ id: schema.splitAssignments.taskId }).from(schema.splitAssignments).where(and(eq(schema.splitAssignments.splitId, split.id), eq(schema.splitAssignments.part, "train")))).map((r) => r.id);
  await runPython("tiny-model", { output_dir: model, corpus: [BUILTIN_POOL_FILE], train_task_ids: trainIds, vocab_size: 4096, hidden_size: 64, intermediate_size: 128, max_position_embeddings: 4096 }, { python });
  say(`tiny model built at ${model}`);

  const agent = await startLocalAgent(app.services, url, { PATH: env.PATH ?? "", HOME: env.HOME ?? "", AGENTLAB_PYTHON: python, AGENTLAB_CONCURRENCY: "2" });
  const [admin] = await db.insert(schema.users).values({ email: "demo@agentlab.local", name: "Demo", passwordHash: "!", role: "admin" }).returning();
  const provider = await insertProvider(db, { name: "reference oracle", kind: "reference", baseUrl: null, model: "reference", apiKeySealed: null, extraParams: {} });
  const exp = await createExperiment(db, {
    name: "demo: tiny model, reference teacher",
    splitId: split.id,
    teacher: { providerId: provider.id, n: 1 },
    baseModel: { source: "path", ref: model },
    training: { epochs: 2, learningRate: 1e-3, batchSize: 4, maxLength: 3072, lora: { r: 4, alpha: 8, dropout: 0, targets: ["q_proj", "v_proj"] }, quantization: "none" },
    evaluation: { maxNewTokens: 64, graderVersion: "agentlab-grader/1 pytest-8.3.4" },
    seeds: [1, 2],
    bootstrap: { iterations: 2000, seed: 0 },
    disclaimer: DISCLAIMER,
  }, admin?.id ?? null);
  say(`experiment ${exp.id} started`);

  try {
    await waitForExperiment(db, exp.id);
  } finally {
    agent.kill("SIGTERM");
  }
  const report = await reportByExperiment(db, exp.id);
  if (!report) throw new Error("no report stored");
  const body = report.body as unknown as ExperimentReport;
  const out = join(dataDir, "report.json");
  await writeFile(out, reportToJson(body));
  const { token } = await createShareLink(db, { reportId: report.id, label: "demo", createdBy: admin?.id ?? null });
  await app.close();
  await database.close();
  say(`finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(`\n${DISCLAIMER}\n`);
  console.log(`outcome: ${body.outcome.headline}`);
  console.log(`report JSON: ${out}`);
  console.log(`report URL:  http://localhost:3000/reports/${report.id}  (serve it with: AGENTLAB_DATA_DIR=${dataDir} npm start)`);
  console.log(`share URL:   http://localhost:3000/share/${token}  (read-only, no login)`);
  console.log(JSON.stringify({ demo: "ok", wallSeconds: Math.round((Date.now() - t0) / 1000), reportId: report.id, reportJson: out }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
