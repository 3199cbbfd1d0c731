import { z } from "zod";
import {
  claimTestRun, getSelection, getTestRun, stageJobs, listEvaluations, saveReport, saveSelection, updateStage,
  type Db, type StageRow,
} from "@agentlab/db";
import {
  DomainError, EvalProtocol, ModelRef, bestEpochPerSeed, buildReport, contaminationCheck, modelKey, modelLabel, selectByDev,
  type DevCandidate, type ExperimentConfig, type SelectionDecision, type StageDef,
} from "@agentlab/core";
import type { Services } from "../services";
import { advanceEvaluation, emptyEval, type EvalModel, type EvalState } from "./evaluate";
import { splitTasks } from "./tasks";
import { datasetStage, datasetTaskKeys } from "./data";

// One handler per stage kind. Each is re-entrant: it reads what the stage already recorded and
// does the next step, so a crash at any point resumes without duplicate jobs or results.

export type StageCtx = { services: Services; experimentId: string; config: ExperimentConfig; stage: StageDef; row: StageRow; rows: Map<string, StageRow> };
export type StageResult = { state: "running" | "succeeded"; output: Record<string, unknown>; jobIds?: string[] };

// `artifact`: the archive of the snapshot in the artifact store, which any agent can fetch.
const Snapshot = z.object({ epoch: z.number().int().min(1), path: z.string(), sha256: z.string(), artifact: z.string().nullable().optional() });
const TrainOutput = z.object({ jobId: z.string().optional(), snapshots: z.array(Snapshot).optional() });

async function trainStage(c: StageCtx): Promise<StageResult> {
  const t = c.stage.target;
  if (t?.model !== "seed") throw new Error("train stage without a seed");
  const data = c.rows.get("dataset")?.output as { datasetId?: string; datasetHash?: string } | undefined;
  if (!data?.datasetId) throw new DomainError("PRECONDITION_FAILED", "no SFT dataset recorded by the dataset stage");
  const tc = c.config.training;
  const job = await c.services.queue.enqueue({
    type: "train",
    experimentId: c.experimentId,
    dedupeKey: `exp:${c.experimentId}:train:s${t.seed}`,
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    payload: {
      datasetId: data.datasetId,
      datasetHash: data.datasetHash ?? null,
      // TrainSpec (packages/core/src/trainer) less the paths, which the agent chooses.
      spec: {
        base_model: c.config.baseModel.ref,
        lora: { r: tc.lora.r, alpha: tc.lora.alpha, dropout: tc.lora.dropout, target_modules: tc.lora.targets },
        epochs: tc.epochs, learning_rate: tc.learningRate, lr_schedule: tc.schedule, batch_size: tc.batchSize, grad_accum: tc.gradAccum,
        max_length: tc.maxLength, seed: t.seed, quantization: tc.quantization, local_files_only: c.config.baseModel.source === "path",
      },
    },
  });
  const [j] = await stageJobs(c.services.db, [job.id]);
  if (!j || j.state === "queued" || j.state === "running" || j.state === "canceling") return { state: "running", output: { jobId: job.id }, jobIds: [job.id] };
  if (j.state !== "succeeded") throw new DomainError("PRECONDITION_FAILED", `training seed ${t.seed} ${j.state}: ${j.error ?? j.terminalReason ?? "no error given"}`);
  const snaps = z.object({ snapshots: z.array(Snapshot).min(1) }).safeParse(j.result);
  if (!snaps.success) throw new DomainError("PRECONDITION_FAILED", `training seed ${t.seed} returned no adapter snapshots`);
  return { state: "succeeded", output: { jobId: job.id, snapshots: snaps.data.snapshots }, jobIds: [job.id] };
}

async function devStage(c: StageCtx): Promise<StageResult> {
  const t = c.stage.target;
  let models: EvalModel[];
  if (!t || t.model === "base") models = [{ key: "base", adapter: null }];
  else {
    const train = TrainOutput.parse(c.rows.get(`train:s${t.seed}`)?.output ?? {});
    models = (train.snapshots ?? []).map((s) => ({ key: modelKey({ model: "adapter", seed: t.seed, seedIndex: t.seedIndex, epoch: s.epoch }), adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null } }));
  }
  const tasks = await splitTasks(c.services.db, c.config.splitId, "dev");
  const step = await advanceEvaluation(c.services, { experimentId: c.experimentId, config: c.config, split: "dev", tasks, models }, { ...emptyEval(), ...(c.row.output as Partial<EvalState>) });
  return { ...step, output: step.output, jobIds: evalJobIds(step.output) };
}

const evalJobIds = (s: EvalState) => [...Object.values(s.generate), ...Object.values(s.grade).flatMap((g) => Object.values(g))].slice(0, 10_000);

/** Dev pass counts of every candidate, from the stored evaluations. */
async function devCandidates(db: Db, experimentId: string, config: ExperimentConfig): Promise<DevCandidate[]> {
  const rows = await listEvaluations(db, { experimentId, split: "dev" });
  const counts = new Map<string, { n: number; passed: number }>();
  for (const r of rows) {
    const c = counts.get(r.modelKey) ?? { n: 0, passed: 0 };
    c.n += 1;
    c.passed += r.verdict === "pass" ? 1 : 0;
    counts.set(r.modelKey, c);
  }
  const out: DevCandidate[] = [];
  const base = counts.get("base");
  if (base) out.push({ ref: { model: "base" }, ...base });
  config.seeds.forEach((seed, seedIndex) => {
    for (let epoch = 1; epoch <= config.training.epochs; epoch++) {
      const c = counts.get(modelKey({ model: "adapter", seed, seedIndex, epoch }));
      if (c) out.push({ ref: { model: "adapter", seed, seedIndex, epoch }, ...c });
    }
  });
  return out;
}

async function selectStage(c: StageCtx): Promise<StageResult> {
  const decision = selectByDev(await devCandidates(c.services.db, c.experimentId, c.config));
  const stored = await saveSelection(c.services.db, c.experimentId, decision as unknown as Record<string, unknown>);
  return { state: "succeeded", output: { selected: stored.selected, outcome: stored.outcome } };
}

async function testModels(c: StageCtx): Promise<ModelRef[]> {
  const seeds = bestEpochPerSeed(await devCandidates(c.services.db, c.experimentId, c.config)).map((d) => d.ref);
  return [{ model: "base" }, ...seeds];
}

async function testStage(c: StageCtx): Promise<StageResult> {
  const { db } = c.services;
  let output = c.row.output as Partial<EvalState> & { models?: ModelRef[] };
  if (!output.models) {
    const models = await testModels(c);
    // Claiming the run and recording it in the stage happen together, so a crash in between cannot
    // leave a claimed run that the resumed stage would then be refused.
    await db.transaction(async (tx) => {
      await claimTestRun(tx, c.experimentId, models);
      await updateStage(tx, c.experimentId, c.stage.key, { output: { models } });
    });
    output = { models };
  } else if (!(await getTestRun(db, c.experimentId))) {
    throw new DomainError("INTERNAL", "test stage recorded models but no test run is claimed");
  }
  const snapshots = (seed: number) => TrainOutput.parse(c.rows.get(`train:s${seed}`)?.output ?? {}).snapshots ?? [];
  const models: EvalModel[] = (output.models ?? []).map((m) => {
    if (m.model === "base") return { key: "base", adapter: null };
    const s = snapshots(m.seed).find((x) => x.epoch === m.epoch);
    if (!s) throw new DomainError("PRECONDITION_FAILED", `no adapter snapshot for ${modelLabel(m)}`);
    return { key: modelKey(m), adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null } };
  });
  const tasks = await splitTasks(db, c.config.splitId, "test");
  const step = await advanceEvaluation(c.services, { experimentId: c.experimentId, config: c.config, split: "test", tasks, models }, { ...emptyEval(), ...output });
  return { state: step.state, output: { ...step.output, models: output.models }, jobIds: evalJobIds(step.output) };
}

async function reportStage(c: StageCtx): Promise<StageResult> {
  const { db } = c.services;
  const selection = (await getSelection(db, c.experimentId)) as unknown as SelectionDecision | undefined;
  if (!selection) throw new DomainError("PRECONDITION_FAILED", "no selection decision stored");
  const testOut = c.rows.get("test_eval")?.output as { models?: ModelRef[] } | undefined;
  const testAdapters = (testOut?.models ?? []).filter((m) => m.model === "adapter");
  const [dev, test] = await Promise.all([listEvaluations(db, { experimentId: c.experimentId, split: "dev" }), listEvaluations(db, { experimentId: c.experimentId, split: "test" })]);
  const group = (rows: typeof dev) => {
    const out: Record<string, { taskId: string; group: string; verdict: string }[]> = {};
    for (const r of rows) (out[r.modelKey] ??= []).push({ taskId: r.taskId, group: r.sourceGroup, verdict: r.verdict });
    return out;
  };
  // The protocols actually used by the compared test evaluations (base, selected, per-seed).
  const protocols: Record<string, EvalProtocol> = {};
  for (const r of test) {
    const parsed = EvalProtocol.safeParse(r.protocol);
    if (!parsed.success) throw new DomainError("PRECONDITION_FAILED", `the ${r.split} evaluation of ${r.modelKey} on ${r.taskId} has an unreadable protocol record`);
    const p = parsed.data;
    const label = r.modelKey;
    const seen = protocols[label];
    if (!seen) protocols[label] = p;
    else if (JSON.stringify(seen) !== JSON.stringify(p)) protocols[`${label} (task ${r.taskId})`] = p;
  }
  const [devTasks, testTasks, sftKeys] = await Promise.all([splitTasks(db, c.config.splitId, "dev"), splitTasks(db, c.config.splitId, "test"), datasetTaskKeys(c)]);
  const trainTasks = sftKeys.size ? (await splitTasks(db, c.config.splitId, "train")).filter((t) => sftKeys.has(t.id)) : [];
  const report = buildReport({
    experimentId: c.experimentId,
    name: c.config.name,
    generatedAt: new Date().toISOString(),
    config: c.config,
    selection,
    protocols,
    dev: group(dev),
    test: group(test),
    testAdapters,
    contamination: contaminationCheck({ test: testTasks, sft: trainTasks, dev: devTasks }),
  });
  const row = await saveReport(db, c.experimentId, report as unknown as Record<string, unknown>);
  return { state: "succeeded", output: { reportId: row.id } };
}

export async function runStage(c: StageCtx): Promise<StageResult> {
  switch (c.stage.kind) {
    case "collect":
    case "verify":
    case "dataset":
      return datasetStage(c);
    case "train":
      return trainStage(c);
    case "dev_eval":
      return devStage(c);
    case "select":
      return selectStage(c);
    case "test_eval":
      return testStage(c);
    case "report":
      return reportStage(c);
  }
}
