import { z } from "zod";
import {
  claimTestRun, getTestRun, stageJobs, listEvaluations, noVerdictGenerations, saveSelection, updateStage,
  type Db, type StageRow,
} from "@agentlab/db";
import {
  DomainError, ModelRef, TrainMethod, assertSameProtocol, bestEpochPerSeed, modelKey, modelLabel, parseJobResult, protocolsByModel, selectByDev, trainJobPayload,
  trainJobRequirements,
  type DevCandidate, type ExperimentConfig, type StageDef,
} from "@agentlab/core";
import type { Services } from "../services";
import { advanceEvaluation, emptyEval, type EvalModel, type EvalState } from "./evaluate";
import { splitTasks } from "./tasks";
import { datasetStage } from "./data";
import { reportStage } from "./report-stage";

// One handler per stage kind. Each is re-entrant: it reads what the stage already recorded and
// does the next step, so a crash at any point resumes without duplicate jobs or results.

export type StageCtx = { services: Services; experimentId: string; config: ExperimentConfig; stage: StageDef; row: StageRow; rows: Map<string, StageRow> };
export type StageResult = { state: "running" | "succeeded"; output: Record<string, unknown>; jobIds?: string[] };

// `artifact`: the archive of the snapshot in the artifact store, which any agent can fetch.
const Snapshot = z.object({ epoch: z.number().int().min(1), path: z.string(), sha256: z.string(), artifact: z.string().nullable().optional() });
const DatasetOutput = z.object({ datasetId: z.string().uuid(), datasetHash: z.string().regex(/^[a-f0-9]{64}$/) });
const TrainOutput = z.object({ jobId: z.string().optional(), snapshots: z.array(Snapshot).optional(), method: TrainMethod.optional() });

async function trainStage(c: StageCtx): Promise<StageResult> {
  const t = c.stage.target;
  if (t?.model !== "seed") throw new Error("train stage without a seed");
  const data = DatasetOutput.safeParse(c.rows.get("dataset")?.output);
  if (!data.success) throw new DomainError("PRECONDITION_FAILED", "no SFT dataset (id and hash) recorded by the dataset stage");
  const tc = c.config.training;
  const job = await c.services.queue.enqueue({
    type: "train",
    experimentId: c.experimentId,
    dedupeKey: `exp:${c.experimentId}:train:s${t.seed}`,
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    // The agent fetches the snapshot by its hash; the dataset id stays in the stage output.
    payload: trainJobPayload(c.config, t.seed, { datasetHash: data.data.datasetHash }),
    requirements: trainJobRequirements(c.config),
  });
  const [j] = await stageJobs(c.services.db, [job.id]);
  if (!j || j.state === "queued" || j.state === "running" || j.state === "canceling") return { state: "running", output: { jobId: job.id }, jobIds: [job.id] };
  if (j.state !== "succeeded") throw new DomainError("PRECONDITION_FAILED", `training seed ${t.seed} ${j.state}: ${j.error ?? j.terminalReason ?? "no error given"}`);
  const record = parseJobResult("train", j.result);
  if (!record || record.snapshots.length === 0) throw new DomainError("PRECONDITION_FAILED", `training seed ${t.seed} returned no run record with adapter snapshots`);
  // Every seed trains with the method resolved at creation, so seeds differ by their seed only.
  if (tc.method && record.method !== tc.method) throw new DomainError("PRECONDITION_FAILED", `training seed ${t.seed} ran ${record.method}, the experiment resolved ${tc.method}`);
  const snapshots = record.snapshots.map((s) => ({ epoch: s.epoch, path: s.path, sha256: s.sha256, artifact: s.artifact }));
  return { state: "succeeded", output: { jobId: job.id, snapshots, method: record.method }, jobIds: [job.id] };
}

async function devStage(c: StageCtx): Promise<StageResult> {
  const t = c.stage.target;
  let models: EvalModel[];
  if (!t || t.model === "base") models = [{ key: "base", adapter: null, trainingMethod: null }];
  else {
    const train = TrainOutput.parse(c.rows.get(`train:s${t.seed}`)?.output ?? {});
    models = (train.snapshots ?? []).map((s) => ({
      key: modelKey({ model: "adapter", seed: t.seed, seedIndex: t.seedIndex, epoch: s.epoch }), adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null }, trainingMethod: train.method ?? null,
    }));
  }
  const tasks = await splitTasks(c.services.db, c.config.splitId, "dev");
  const step = await advanceEvaluation(c.services, { experimentId: c.experimentId, config: c.config, split: "dev", tasks, models }, { ...emptyEval(), ...(c.row.output as Partial<EvalState>) });
  return { state: step.state, output: step.output, jobIds: step.jobIds };
}

/**
 * Dev pass counts of every candidate, from the stored evaluations, over the dev tasks that hold a
 * verdict for every candidate: a task whose grading failed for one model is excluded for all of
 * them (and counted), so no infra error reads as a model failure.
 */
async function devCandidates(db: Db, experimentId: string, config: ExperimentConfig): Promise<DevCandidate[]> {
  const all = await listEvaluations(db, { experimentId, split: "dev" });
  const excluded = new Set((await noVerdictGenerations(db, experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId));
  const rows = all.filter((r) => !excluded.has(r.taskId));
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
  // One protocol for every dev evaluation: selection never compares runs made under different ones.
  assertSameProtocol(protocolsByModel(await listEvaluations(c.services.db, { experimentId: c.experimentId, split: "dev" })));
  const decision = selectByDev(await devCandidates(c.services.db, c.experimentId, c.config));
  const stored = await saveSelection(c.services.db, c.experimentId, decision as unknown as Record<string, unknown>);
  const excluded = new Set((await noVerdictGenerations(c.services.db, c.experimentId)).filter((g) => g.split === "dev").map((g) => g.taskId));
  return { state: "succeeded", output: { selected: stored.selected, outcome: stored.outcome, devTasksExcludedNoVerdict: excluded.size } };
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
    if (m.model === "base") return { key: "base", adapter: null, trainingMethod: null };
    const s = snapshots(m.seed).find((x) => x.epoch === m.epoch);
    if (!s) throw new DomainError("PRECONDITION_FAILED", `no adapter snapshot for ${modelLabel(m)}`);
    const method = TrainOutput.parse(c.rows.get(`train:s${m.seed}`)?.output ?? {}).method ?? null;
    return { key: modelKey(m), adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null }, trainingMethod: method };
  });
  const tasks = await splitTasks(db, c.config.splitId, "test");
  const step = await advanceEvaluation(c.services, { experimentId: c.experimentId, config: c.config, split: "test", tasks, models }, { ...emptyEval(), ...output });
  return { state: step.state, output: { ...step.output, models: output.models }, jobIds: step.jobIds };
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
