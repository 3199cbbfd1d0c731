// `npm run demo`: the learning proof, headless, on the embedded database (PGlite) and a
// local agent. The synthetic "learnable" pool (built in) → a frozen split by source group → a tiny
// base built here (tokenizer and echo warm-up from train tasks only) → two experiments:
//   main:    the reference teacher's fixes of the train tasks → LoRA → dev selection → one test run;
//   control: the same prompts with answers shuffled across train tasks, so the adapter cannot help.
//   A/A:     the main's selected adapter against itself, two sampling seeds at T = 0.7, on the same
//            test tasks and with the report's clustered statistics: the noise floor, never significant
//            but by the rule's α.
// The base is warmed up on the train repairs of a quarter of the shapes, meant to start above 0% of
// test so that a control can regress (measured at 0%: see warmupSamples in learning-proof.ts).
// Each report's own significance rule decides. Tasks and model are synthetic: nothing here is about
// real models. The last line is one JSON object naming the three reports' JSON files.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  type Db,
  createShareLink,
  getPool,
  insertProvider,
  listProviders,
  migrateDatabase,
  openDatabase,
  reportByExperiment,
  schema,
} from "@agentlab/db";
import {
  modelLabel,
  parseStageOutput,
  reportToJson,
  significanceLabel,
  trainKey,
  type ExperimentConfigInput,
  type ExperimentReport,
  type TaskSpec,
} from "@agentlab/core";
import { and, eq } from "drizzle-orm";
import { loadEnv } from "../apps/web/server/env";
import { createLogger } from "../apps/web/server/logger";
import { createApp } from "../apps/web/server/app";
import { ensureBuiltinPool, LEARNABLE_POOL_NAME } from "../apps/web/server/bootstrap/builtin-pool";
import { startLocalAgent } from "../apps/web/server/bootstrap/local-agent";
import { createExperiment } from "../apps/web/server/experiments/service";
import { findPython } from "../apps/agent/src/trainer/python";
import { Grader } from "../apps/agent/src/grading/grader";
import {
  buildWarmBase,
  LEARNING_SHAPE,
  LEARNING_TRAINING,
  learnableSplit,
  shuffledAnswersDataset,
} from "./learning-proof";
import { cacheRoot, withCacheLock } from "./tiny-base-cache";
import { compareOutcomes, generate, generateSpec, grade, type Snapshot } from "./learning-proof-eval";

const ROOT = resolve(import.meta.dirname, "..");
const DISCLAIMER =
  "Synthetic demo: the tasks are a generated one-bug family (`<=` written as `<`) and the base is a tiny model built and warmed up on this machine from train tasks only; " +
  "the teacher is the reference oracle. These numbers show that the pipeline detects a real gain (and no gain in the control); they say nothing about real models.";

// AGENTLAB_DEMO_SAMPLES=n: n sampled answers per task (temperature AGENTLAB_DEMO_TEMPERATURE,
// default 0.7) instead of one greedy answer, so the report compares per-task pass rates.
const DEMO_SAMPLES = Number(process.env.AGENTLAB_DEMO_SAMPLES ?? "1");
const SAMPLING =
  DEMO_SAMPLES > 1
    ? {
        samples: DEMO_SAMPLES,
        decoding: { doSample: true, temperature: Number(process.env.AGENTLAB_DEMO_TEMPERATURE ?? "0.7"), topP: 1 },
      }
    : {};

// AGENTLAB_DEMO_DPO=1: the main experiment is `sft+dpo` (DPO from the SFT start on pairs
// of the reference fix against the start policy's own graded failures on train); the control is
// skipped. AGENTLAB_DEMO_DPO_{BETA,LR,EPOCHS,ROUNDS,SAMPLES,SFT_WEIGHT} override its settings.
const DEMO_DPO = process.env.AGENTLAB_DEMO_DPO === "1";
const dpoNum = (key: string, fallback: number) => Number(process.env[`AGENTLAB_DEMO_DPO_${key}`] ?? String(fallback));
const DPO_RECIPE: Pick<ExperimentConfigInput, "method" | "dpo"> = DEMO_DPO
  ? {
      method: "sft+dpo",
      dpo: {
        beta: dpoNum("BETA", 0.1),
        // Unset: the SFT rate ÷ DPO_LR_DIVISOR, the recipe's own default (a larger DPO rate
        // displaces the chosen answers' likelihood on this model).
        ...(process.env.AGENTLAB_DEMO_DPO_LR ? { learningRate: dpoNum("LR", 0) } : {}),
        epochs: dpoNum("EPOCHS", 2),
        rounds: dpoNum("ROUNDS", 1),
        samples: dpoNum("SAMPLES", 2),
        sftWeight: dpoNum("SFT_WEIGHT", 1),
        temperature: 0.7,
        batchSize: 4,
      },
    }
  : {};

const t0 = Date.now();
const say = (msg: string) => console.log(`[demo +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}`);

async function waitForExperiment(db: Db, id: string, tag: string): Promise<void> {
  let last = "";
  for (;;) {
    const [row] = await db.select().from(schema.experiments).where(eq(schema.experiments.id, id));
    const stages = await db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id));
    const line = stages.map((s) => `${s.key}:${s.state}`).join(" ");
    if (line !== last) say(`${tag} ${line}`);
    last = line;
    if (!row || row.state !== "running") {
      if (row?.state !== "succeeded")
        throw new Error(`${tag} experiment ${row?.state ?? "missing"}: ${row?.error ?? ""}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const figures = (r: ExperimentReport) => {
  const test = r.summary[1];
  // Base kept: no gain is claimed, but each seed's best adapter still ran on test; its paired
  // comparison (the report's per-seed row) shows the discordance the control produced.
  const s = test.stats ?? r.seeds?.perSeed[0]?.stats ?? null;
  return {
    outcome: r.outcome.kind,
    basePass: test.base.value,
    adapterPass: test.sft?.value ?? s?.treatedPass ?? null,
    compared: test.stats ? "selected adapter" : s ? "best adapter (base kept, not claimed)" : "none",
    delta: s?.delta ?? null,
    ci: s?.ci ?? null,
    p: s?.p ?? null,
    test: s?.test ?? null,
    unit: s?.unit ?? null,
    units: s?.units ?? null,
    intervalMethod: s?.intervalMethod ?? null,
    improved: s?.improved ?? null,
    regressed: s?.regressed ?? null,
    significant: test.significant,
    contamination: { exact: r.contamination.exactPairs, normalized: r.contamination.normalizedPairs },
    // Test references found among the training answers (the question-side check above cannot see it).
    answerContamination: r.answerContamination
      ? { testTasks: r.answerContamination.test.testTasks, leaked: r.answerContamination.test.testTasksWithLeak }
      : null,
  };
};

/** The sft+dpo report's figures: the rounds' pairs and the three pairwise test comparisons. */
const dpoFigures = (r: ExperimentReport) =>
  r.dpo
    ? {
        selected: r.outcome.selectedLabel,
        rounds: r.dpo.rounds.map((x) => ({ round: x.round, policy: x.policyLabel, stats: x.stats })),
        devPoints: r.dpo.devPoints,
        comparisons: r.dpo.comparisons.map((x) => ({
          a: x.aLabel,
          b: x.bLabel,
          aPass: x.row.base.value,
          bPass: x.row.sft?.value ?? null,
          delta: x.row.stats?.delta ?? null,
          ci: x.row.stats?.ci ?? null,
          p: x.row.stats?.p ?? null,
          label: x.row.label,
        })),
      }
    : null;

// One data dir (database, artifacts) for every demo run of this machine, in the cache outside the
// clone: the split's test-read ledger keeps counting across runs, as it would in a real lab that
// reran the same evaluation. Each run's report files go to runs/<time>/. AGENTLAB_DEMO_DIR moves it.
const DEMO_DIR = process.env.AGENTLAB_DEMO_DIR || join(cacheRoot(), "demo");

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
  const tiny = await buildWarmBase({ python, train, shape: LEARNING_SHAPE });
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
  const provider =
    (await listProviders(db)).find((p) => p.kind === "reference" && p.name === "reference oracle") ??
    (await insertProvider(db, {
      name: "reference oracle",
      kind: "reference",
      baseUrl: null,
      model: "reference",
      apiKeySealed: null,
      extraParams: {},
    }));
  const recipe = (name: string, datasetId?: string): ExperimentConfigInput => ({
    name,
    splitId: split.id,
    teacher: { providerId: provider.id, n: 1 },
    ...(datasetId ? { datasetId } : {}),
    baseModel: { source: "path", ref: tiny.path },
    training: {
      epochs: LEARNING_TRAINING.epochs,
      learningRate: LEARNING_TRAINING.learningRate,
      batchSize: LEARNING_TRAINING.batchSize,
      maxLength: LEARNING_TRAINING.maxLength,
      quantization: "none",
      lora: {
        r: LEARNING_TRAINING.lora.r,
        alpha: LEARNING_TRAINING.lora.alpha,
        dropout: LEARNING_TRAINING.lora.dropout,
        targets: LEARNING_TRAINING.lora.target_modules,
      },
    },
    evaluation: { maxNewTokens: 80, graderVersion: "agentlab-grader/2 judge pytest-8.3.4", ...SAMPLING },
    seeds: [1],
    bootstrap: { iterations: 2000, seed: 0 },
    ...(datasetId ? {} : DPO_RECIPE),
    disclaimer:
      DISCLAIMER +
      baseNote +
      (datasetId ? " CONTROL: answers shuffled across train tasks; the adapter cannot learn the repair." : ""),
  });

  const reports: Record<string, { body: ExperimentReport; file: string; id: string }> = {};
  try {
    for (const kind of DEMO_DPO ? (["main"] as const) : (["main", "control"] as const)) {
      let datasetId: string | undefined;
      if (kind === "control") {
        const mainId = reports.main?.body.experimentId ?? "";
        const [stage] = await db
          .select()
          .from(schema.experimentStages)
          .where(and(eq(schema.experimentStages.experimentId, mainId), eq(schema.experimentStages.key, "dataset")));
        const source = parseStageOutput("dataset", "dataset", stage?.output)?.datasetId;
        if (!source) throw new Error("the main experiment recorded no dataset");
        datasetId = await shuffledAnswersDataset(app.services, source, 1);
      }
      const exp = await createExperiment(
        db,
        recipe(
          kind === "main" ? "learning proof: synthetic family, tiny model" : "learning proof CONTROL: answers shuffled",
          datasetId,
        ),
        admin?.id ?? null,
      );
      say(`${kind} experiment ${exp.id} started`);
      await waitForExperiment(db, exp.id, kind);
      const report = await reportByExperiment(db, exp.id);
      if (!report) throw new Error(`no ${kind} report stored`);
      const body = report.body;
      const file = join(runDir, `${kind}-report.json`);
      await writeFile(file, reportToJson(body));
      reports[kind] = { body, file, id: report.id };
      say(`${kind}: ${body.outcome.headline}`);
    }
  } finally {
    await agent.stop();
  }
  const main = reports.main;
  const control = reports.control;
  if (!main || (!control && !DEMO_DPO)) throw new Error("a report is missing");
  const aa = DEMO_DPO ? null : await aaControl(db, main.body, test, tiny.path, python, runDir);
  const { token } = await createShareLink(db, { reportId: main.id, label: "demo", createdBy: admin?.id ?? null });
  await app.close();
  await database.close();
  const wallSeconds = Math.round((Date.now() - t0) / 1000);
  const m = figures(main.body);
  const c = control ? figures(control.body) : null;
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const pp = (x: number | null) => (x === null ? "n/a" : `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} pp`);
  say(`finished in ${wallSeconds} s`);
  console.log(`\n${DISCLAIMER}\n`);
  console.log(
    `main:    base ${pct(m.basePass)} → adapter ${pct(m.adapterPass)}, Δ ${pp(m.delta)} [${m.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(m.p)} (${m.test ?? "no test"}), ${m.significant ? "significant" : "NOT significant"}; contamination test↔train exact ${m.contamination.exact}, normalized ${m.contamination.normalized}; test answers found in training answers: ${m.answerContamination ? `${m.answerContamination.leaked} of ${m.answerContamination.testTasks}` : "n/a"}`,
  );
  if (c)
    console.log(
      `control: base ${pct(c.basePass)} → adapter ${pct(c.adapterPass)}, Δ ${pp(c.delta)} [${c.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(c.p)} (${c.test ?? "no test"}), ${c.significant ? "significant" : "not significant"}`,
    );
  const dpo = dpoFigures(main.body);
  for (const cmp of dpo?.comparisons ?? [])
    console.log(
      `dpo:     ${cmp.a} ${pct(cmp.aPass)} vs ${cmp.b} ${pct(cmp.bPass)}, Δ ${pp(cmp.delta)} [${cmp.ci?.map(pp).join(", ") ?? "n/a"}], p = ${String(cmp.p)}, ${cmp.label}`,
    );
  if (aa)
    console.log(
      `A/A:     ${aa.body.comparison}: ${pct(aa.body.stats.basePass)} vs ${pct(aa.body.stats.treatedPass)}, Δ ${pp(aa.body.stats.delta)} [${aa.body.stats.ci.map(pp).join(", ")}], p = ${String(aa.body.stats.p)} (${aa.body.stats.test}), ${aa.body.stats.improved + aa.body.stats.regressed} discordant, ${aa.body.stats.significant ? "significant" : "not significant"}`,
    );
  console.log(
    `report JSON:  ${main.file}\ncontrol JSON: ${control?.file ?? "(skipped)"}\nA/A JSON:     ${aa?.file ?? "(skipped)"}`,
  );
  console.log(
    `report URL:   http://localhost:3000/reports/${main.id}  (serve it with: AGENTLAB_DATA_DIR=${dataDir} npm start)`,
  );
  console.log(`share URL:    http://localhost:3000/share/${token}  (read-only, no login)`);
  console.log(
    JSON.stringify({
      demo: "ok",
      synthetic: true,
      wallSeconds,
      baseCached: tiny.cached,
      reportId: main.id,
      reportJson: main.file,
      controlReportJson: control?.file ?? null,
      aaReportJson: aa?.file ?? null,
      main: m,
      control: c,
      aa: aa
        ? {
            delta: aa.body.stats.delta,
            ci: aa.body.stats.ci,
            p: aa.body.stats.p,
            units: aa.body.stats.units,
            discordant: aa.body.stats.improved + aa.body.stats.regressed,
            significant: aa.body.stats.significant,
          }
        : null,
      dpo,
    }),
  );
}

const AA_TEMPERATURE = 0.7;

/**
 * The A/A control: the main's selected adapter evaluated twice on the split's test tasks, sampling at
 * T = 0.7 with seeds 1 and 2, paired task by task (each answer's prompt hash checked) and compared
 * with the report's clustered statistics. Both sides are one model, so a "significant" result here
 * would be the sampling noise read as an effect. Outside the product's experiment (no selection, no
 * decision follows), written next to the reports.
 */
async function aaControl(
  db: Db,
  report: ExperimentReport,
  test: readonly TaskSpec[],
  base: string,
  python: string,
  runDir: string,
) {
  // The selected adapter; when the base was kept, the best adapter on dev (what was compared).
  const ref =
    report.outcome.selected.model === "adapter"
      ? report.outcome.selected
      : [...report.selection.table].filter((r) => r.ref.model === "adapter").sort((a, b) => b.pass1 - a.pass1)[0]?.ref;
  if (ref?.model !== "adapter") return null;
  const [stage] = await db
    .select()
    .from(schema.experimentStages)
    .where(
      and(
        eq(schema.experimentStages.experimentId, report.experimentId),
        eq(schema.experimentStages.key, trainKey(ref.seed)),
      ),
    );
  const snap = parseStageOutput("train", trainKey(ref.seed), stage?.output)?.snapshots?.find(
    (x) => x.epoch === ref.epoch,
  );
  if (!snap) throw new Error(`no snapshot of ${modelLabel(ref)}`);
  // The local agent removes a job's work folder after the job; the snapshot then lives only as an
  // artifact archive, which this direct path does not unpack yet: the A/A is skipped, not faked.
  if (!existsSync(snap.path)) {
    say(`A/A skipped: the snapshot folder ${snap.path} is gone (kept only as artifact ${snap.artifact ?? "none"})`);
    return null;
  }
  const adapter: Snapshot = { path: snap.path, sha256: snap.sha256 };
  const grader = new Grader(
    {
      backend: "bwrap",
      graderDir: join(ROOT, "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: join(ROOT, ".agentlab/scratch"),
    },
    { workers: 2 },
  );
  try {
    const run = async (seed: number) =>
      grade(
        grader,
        test,
        await generate(python, generateSpec(base, test, adapter, { seed, temperature: AA_TEMPERATURE })),
      );
    const [a, b] = [await run(1), await run(2)];
    const stats = compareOutcomes(test, a, b);
    const body = {
      kind: "aa-control",
      synthetic: true,
      comparison: `${modelLabel(ref)} sampling seed 1 vs seed 2 (T = ${AA_TEMPERATURE})`,
      experimentId: report.experimentId,
      adapterSha256: adapter.sha256,
      tasks: test.length,
      stats,
      label: significanceLabel(stats),
    };
    const file = join(runDir, "aa-report.json");
    await writeFile(file, JSON.stringify(body, null, 2) + "\n");
    say(`A/A: ${body.label}`);
    return { body, file };
  } finally {
    grader.close();
  }
}

// PGlite is one process's database: two demos at once take turns.
withCacheLock(DEMO_DIR, main).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
