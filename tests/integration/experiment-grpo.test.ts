import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { eq } from "drizzle-orm";
import { grpoPromptTasks, insertGrpoPrompts, listStages, schema } from "@agentlab/db";
import {
  GrpoJobPayload,
  parseStageOutput,
  publicContext,
  renderRepairPrompt,
  type JobProgress,
  type TaskSpec,
} from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { grpoJob } from "../../apps/agent/src/jobs/grpo";
import type { JobContext } from "../../apps/agent/src/jobs/types";
import { findPython } from "../../apps/agent/src/trainer/python";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import type { Services } from "../../apps/web/server/services";
import { callerAs } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { buildTinyModel } from "./helpers/tiny-model";
import { referenceCollection } from "./helpers/reference-collection";
import { storedReport } from "./helpers/reports";
import { sandboxCfg } from "./helpers/judge";
import { baseConfig, drive, makeAgent, makeServices, makeSplit, type Behaviour } from "./experiments-harness";

// An sft+grpo experiment through the real queue and stage machine to its report. SFT, generation
// and grading of dev/test are the harness's simulated agent (answers and verdicts known in
// advance); the grpo job is the agent's real handler: TRL GRPOTrainer on the tiny CPU model,
// rewards from the real judge, snapshots uploaded to the server's artifact store. Dev then
// evaluates every GRPO snapshot (the simulated generator knows them as "unknown" adapters) with the
// base and SFT competing; the report pairs base, SFT and GRPO on test.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
let grader: Grader;
let model: string;
/** One viewer for every case: callerAs makes a user with a fixed email. */
let viewer: Awaited<ReturnType<typeof callerAs>>;
const part = new Map<string, string>();
const grpoPayloads: Record<string, unknown>[] = [];
const steps: JobProgress[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    part.set(r.taskId, r.part);
  model = await buildTinyModel(python);
  viewer = await callerAs(s, "viewer");
  grader = new Grader(sandboxCfg(), {
    workers: 1,
    limits: { wallTimeoutS: 20, testTimeoutS: 5, memoryMb: 256, pids: 48 },
  });
}, 300_000);
afterAll(async () => {
  grader?.close();
  await t?.drop();
});

const group = (task: TaskSpec) => Number(task.source_group.replace(/\D/g, ""));

/** The agent's grpo handler with the supervisor's side played here: progress kept, artifacts put in the server's store. */
async function realGrpo(
  payload: Record<string, unknown>,
  record: (event: Record<string, unknown>) => Promise<void>,
): Promise<Record<string, unknown>> {
  grpoPayloads.push(payload);
  const stored: Promise<void>[] = [];
  const handler = grpoJob(500, { grader, refs: new ReferenceIds(grader) });
  const ac = new AbortController();
  const ctx: JobContext = {
    jobId: "grpo",
    attemptId: "a1",
    attempt: 1,
    earlierArtifacts: [],
    type: "grpo",
    payload,
    signal: ac.signal,
    abortReason: () => null,
    log: pino({ level: "warn" }),
    emitLog: () => {},
    progress: (p) => {
      steps.push(p);
      stored.push(record(p));
    },
    uploadArtifact: async (path) => s.artifacts.put(await readFile(path)),
    workDir: await mkdtemp(join(tmpdir(), "grpo-job-")),
    agent: {
      serverUrl: "http://127.0.0.1:9",
      credential: "",
      stateDir: await mkdtemp(join(tmpdir(), "grpo-state-")),
      python,
      sandboxBackend: "bwrap",
      sandboxOk: true,
    },
  };
  const out = await handler(ctx);
  await Promise.all(stored);
  if (out.reason !== "succeeded" || !out.result) throw new Error(`grpo job ${out.reason}: ${out.error ?? ""}`);
  return out.result;
}

// Dev and test: the base and both SFT epochs fix nothing (so GRPO starts from the base: a tie keeps
// it), every GRPO snapshot fixes three groups in four.
const behaviour: Behaviour = {
  fixes: (m, task) => m === "unknown" && group(task) % 4 !== 3,
  grpo: realGrpo,
};

describe("an sft+grpo experiment", () => {
  it("runs SFT → GRPO from the dev-selected start on train prompts only → dev over every snapshot → a report with the GRPO arm", async () => {
    const train = [...part]
      .filter(([, p]) => p === "train")
      .map(([k]) => k)
      .sort();
    // A verified SFT snapshot of reference answers for the train tasks, as the teacher module stores one.
    const col = await referenceCollection(t.db, { splitId, tasks, taskIds: train });
    const datasetId = (await createDataset(s, { name: "reference", splitId, collectionIds: [col] })).id;
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, {
        datasetId,
        seeds: [1],
        baseModel: { source: "path", ref: model },
        training: { epochs: 2, lora: { r: 4, alpha: 8, dropout: 0, targets: ["q_proj", "v_proj"] } },
        method: "sft+grpo",
        grpo: { steps: 2, snapshotEverySteps: 1, numGenerations: 2, maxCompletionLength: 8 },
      }),
      null,
    );
    const runner = createExperimentRunner(s, { autoStart: false });
    expect(await drive(t.db, runner, exp.id, fit, tasks, behaviour)).toEqual({ state: "succeeded", error: null });

    // Every setting pinned in the stored recipe, TRL's defaults where the recipe said nothing.
    const [stored] = await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, exp.id));
    expect(stored?.config.grpo).toMatchObject({ beta: 0, lossType: "dapo", scaleRewards: "group", epsilonHigh: 0.28 });

    // The job trained on every train task and nothing else, from the base (no start adapter).
    expect(grpoPayloads).toHaveLength(1);
    const payload = GrpoJobPayload.parse(grpoPayloads[0]);
    expect(payload.tasks.map((x) => x.task.id).sort()).toEqual(train);
    expect(payload.startAdapterSha256).toBeNull();
    expect(payload.spec).toMatchObject({ max_steps: 2, num_generations: 2, loss_type: "dapo", method: "lora-fp32" });
    expect(await grpoPromptTasks(t.db, { experimentId: exp.id, seed: 1 })).toEqual(train);

    const stages = new Map((await listStages(t.db, exp.id)).map((r) => [r.key, r]));
    const out = parseStageOutput("grpo", "grpo:s1", stages.get("grpo:s1")?.output);
    expect(out?.start).toEqual({ model: "base" });
    expect(out?.prompts).toBe(train.length);
    // Without dynamic sampling: no pass-rate stage, no filter counts, no group dropped.
    expect(stages.has("grpo_sample")).toBe(false);
    expect(out?.promptFilter).toBeUndefined();
    expect(await viewer.grpo.promptFilter({ id: exp.id })).toBeNull();
    expect(out?.snapshots?.map((x) => [x.epoch, x.step])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    // The tiny model writes no code block: every completion is unparseable, reward 0, in the audit.
    expect(out?.audit?.unparseable).toBe(4);
    expect(steps.filter((p) => "event" in p && p.event === "grpo_step")).toHaveLength(2);
    // The experiment page's GRPO panel reads the stored steps back: one point a step, the snapshots.
    const [curve, ...others] = await viewer.grpo.curves({ id: exp.id });
    expect(others).toEqual([]);
    expect(curve).toMatchObject({ seed: 1, stageState: "succeeded", fraction: 1, totals: { steps: 2 } });
    const events = steps.flatMap((p) => ("event" in p && p.event === "grpo_step" ? [p] : []));
    expect(curve?.points.map((p) => [p.step, p.rewardMean, p.suspicious])).toEqual(
      events.map((e) => [e.step, e.reward_mean, e.audit.unparseable]),
    );
    expect(curve?.snapshots.map((x) => [x.snapshot, x.step])).toEqual([
      [1, 1],
      [2, 2],
    ]);

    // Dev: base and SFT competed with every snapshot; both snapshots tie, the earlier one wins.
    const report = (await storedReport(t.db, exp.id)).body;
    expect(report.outcome.selected).toEqual({ model: "grpo", seed: 1, seedIndex: 0, epoch: 1 });
    expect(report.selection.table.map((r) => r.label)).toEqual([
      "base",
      "seed 1 · epoch 1",
      "seed 1 · epoch 2",
      "GRPO · seed 1 · snapshot 1",
      "GRPO · seed 1 · snapshot 2",
    ]);
    // Test: base 0, SFT 0, GRPO three groups in four, each comparison paired and clustered.
    const test = [...part].filter(([, p]) => p === "test").flatMap(([id]) => tasks.get(id) ?? []);
    const rate = test.filter((x) => group(x) % 4 !== 3).length / test.length;
    expect(report.grpo?.selectedGrpo).toEqual(report.outcome.selected);
    expect(report.grpo?.comparisons.map((c) => [c.aLabel, c.bLabel, c.row.stats?.delta])).toEqual([
      ["base", "seed 1 · epoch 1", 0],
      ["base", "GRPO · seed 1 · snapshot 1", rate],
      ["seed 1 · epoch 1", "GRPO · seed 1 · snapshot 1", rate],
    ]);
    expect(report.summary[1].stats?.delta).toBe(rate);
  }, 900_000);

  it("with dynamic sampling, keeps as prompts only the train tasks the start passes sometimes, counted, and drops equal-reward groups from the loss (control: the run above, without it, prompted every train task)", async () => {
    const train = [...part]
      .filter(([, p]) => p === "train")
      .map(([k]) => k)
      .sort();
    const col = await referenceCollection(t.db, { splitId, tasks, taskIds: train });
    const datasetId = (await createDataset(s, { name: "reference-ds", splitId, collectionIds: [col] })).id;
    // The start (the base again: on dev nothing but the GRPO snapshots fixes anything) on train:
    // groups ≡ 0 (mod 3) always pass, ≡ 1 never, ≡ 2 every other sample (rate 1/2).
    const kind = (task: TaskSpec) => group(task) % 3;
    const onTrain = (m: string, task: TaskSpec, i: number) =>
      m === "base" && (kind(task) === 0 || (kind(task) === 2 && i % 2 === 0));
    const sampled: Behaviour = {
      ...behaviour,
      fixesSample: (m, task, i) => (part.get(task.id) === "train" ? onTrain(m, task, i) : behaviour.fixes(m, task)),
    };
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, {
        datasetId,
        seeds: [1],
        baseModel: { source: "path", ref: model },
        training: { epochs: 2, lora: { r: 4, alpha: 8, dropout: 0, targets: ["q_proj", "v_proj"] } },
        method: "sft+grpo",
        grpo: { steps: 2, snapshotEverySteps: 1, numGenerations: 2, maxCompletionLength: 8, dynamicSampling: {} },
      }),
      null,
    );
    const [payloadsBefore, stepsBefore] = [grpoPayloads.length, steps.length];
    const runner = createExperimentRunner(s, { autoStart: false });
    expect(await drive(t.db, runner, exp.id, fit, tasks, sampled)).toEqual({ state: "succeeded", error: null });

    const byKind = (k: number) => train.filter((id) => kind(tasks.get(id) ?? ({} as TaskSpec)) === k);
    const kept = byKind(2);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(train.length);
    const stages = new Map((await listStages(t.db, exp.id)).map((r) => [r.key, r]));
    const sample = parseStageOutput("grpo_sample", "grpo_sample", stages.get("grpo_sample")?.output);
    const counts = { measured: train.length, allPass: byKind(0).length, allFail: byKind(1).length, kept: kept.length };
    expect(sample?.filter).toEqual({ ...counts, unmeasured: 0, samples: 2 });
    expect(sample?.kept).toEqual(kept);
    expect(sample?.start).toEqual({ model: "base" });
    // The job and the stored prompts: the kept tasks only, and the run's output records the counts.
    const payload = GrpoJobPayload.parse(grpoPayloads[payloadsBefore]);
    expect(payload.tasks.map((x) => x.task.id).sort()).toEqual(kept);
    expect(payload.spec).toMatchObject({ equal_reward_groups: "filter", max_resamples: 2 });
    expect(await grpoPromptTasks(t.db, { experimentId: exp.id, seed: 1 })).toEqual(kept);
    const out = parseStageOutput("grpo", "grpo:s1", stages.get("grpo:s1")?.output);
    expect(out?.prompts).toBe(kept.length);
    expect(out?.promptFilter).toEqual(sample?.filter);
    // The tiny model's completions are all unparseable (reward 0): every step's one group is dropped.
    const events = steps.slice(stepsBefore).flatMap((p) => ("event" in p && p.event === "grpo_step" ? [p] : []));
    expect(events.map((e) => e.dropped_groups)).toEqual([1, 1]);
    expect(await viewer.grpo.promptFilter({ id: exp.id })).toEqual({
      state: "succeeded",
      startLabel: "base",
      counts: sample?.filter,
    });
    const [curve] = await viewer.grpo.curves({ id: exp.id });
    expect(curve?.points.map((p) => p.droppedGroups)).toEqual([1, 1]);
  }, 900_000);

  it("refuses a dev or test task as a GRPO prompt in the database (positive control: a train task is stored)", async () => {
    const exp = await createExperiment(t.db, baseConfig(splitId, { method: "sft+grpo" }), null);
    const of = (p: string) => [...part].find(([, x]) => x === p)?.[0] ?? "";
    const prompt = (id: string) => {
      const task = tasks.get(id);
      if (!task) throw new Error(`no task ${id}`);
      return { taskId: id, prompt: renderRepairPrompt(publicContext(task)) };
    };
    expect(await insertGrpoPrompts(t.db, { experimentId: exp.id, seed: 7, prompts: [prompt(of("train"))] })).toBe(1);
    for (const p of ["dev", "test"]) {
      const refused = await insertGrpoPrompts(t.db, { experimentId: exp.id, seed: 7, prompts: [prompt(of(p))] }).then(
        () => "written",
        (e: { cause?: { message?: string }; message?: string }) => String(e.cause?.message ?? e.message),
      );
      expect(refused).toMatch(new RegExp(`grpo prompts come from train tasks only: task \\S+ is ${p} in the split`));
    }
    expect(await grpoPromptTasks(t.db, { experimentId: exp.id, seed: 7 })).toEqual([of("train")]);
  });
});
