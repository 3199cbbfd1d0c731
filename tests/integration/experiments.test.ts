import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import {
  answerParseCounts,
  claimTestRun,
  getSelection,
  listStages,
  reportByExperiment,
  schema,
  stageJobCounts,
  stageJobs,
} from "@agentlab/db";
import type { TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { storedReport } from "./helpers/reports";
import {
  agentStep,
  simRunRecord,
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  makeSplit,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
});
afterAll(async () => t?.drop());

const jobsOf = (experimentId: string, type: string) =>
  t.db
    .select({ id: schema.jobs.id, state: schema.jobs.state })
    .from(schema.jobs)
    .where(and(eq(schema.jobs.experimentId, experimentId), eq(schema.jobs.type, type)));

// Seed 1 fixes every task from epoch 1 on (so epochs 1 and 2 tie and the earlier must win); seed 2 fixes half.
const learns: Behaviour = {
  fixes: (m, task) =>
    m.startsWith("s1e") || (m.startsWith("s2e") && Number(task.source_group.replace(/\D/g, "")) % 2 === 0),
};

describe("experiment stage machine on Postgres", () => {
  let expId: string;

  it("survives a crash mid-train: a new runner resumes and reuses the running train job", async () => {
    expId = await startExperiment(s, baseConfig(splitId));
    const first = createExperimentRunner(s, { autoStart: false });
    await first.advance(expId);
    expect((await jobsOf(expId, "train")).length).toBe(2);
    // The agent takes one train job and is mid-way through it when the server dies.
    let claimed = null;
    for (;;) {
      const step = await agentStep(t.db, fit, tasks, learns, { leaveTrainRunning: true });
      if (!step.claimed || step.claimed.type === "train") {
        claimed = step.claimed;
        break;
      }
    }
    expect(claimed?.type).toBe("train");
    await first.stop();

    const second = createExperimentRunner(s, { autoStart: false });
    await second.advance(expId);
    const train = await jobsOf(expId, "train");
    expect(train.length).toBe(2); // no duplicate training after the restart
    expect(train.find((j) => j.id === claimed?.jobId)?.state).toBe("running");
    const stages = new Map((await listStages(t.db, expId)).map((r) => [r.key, r]));
    expect(stages.get("train:s1")?.state).toBe("running");
    expect(stages.get("collect")?.state).toBe("succeeded");

    // Finish the interrupted attempt as the agent would after reconnecting, then run to the end.
    if (!claimed) throw new Error("no train job claimed");
    const { finishAttempt } = await import("@agentlab/db");
    const seed = Number((claimed.payload as { spec: { seed: number } }).spec.seed);
    await finishAttempt(t.db, {
      jobId: claimed.jobId,
      attemptId: claimed.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      error: null,
      result: simRunRecord(seed, "lora-fp32"),
    });
    const end = await drive(t.db, second, expId, fit, tasks, learns);
    expect(end).toEqual({ state: "succeeded", error: null });
    // Every generate job ran once: base + 2 seeds × 2 epochs on dev, base + one per seed on test.
    expect((await jobsOf(expId, "generate")).length).toBe(5 + 3);
  });

  it("counts each stage's job states in the database, equal to counting the loaded rows", async () => {
    const counts = await stageJobCounts(t.db, expId, 50);
    const stages = await listStages(t.db, expId);
    let jobsSeen = 0;
    for (const st of stages) {
      const rows = await stageJobs(t.db, st.jobIds);
      const c = counts.get(st.key);
      expect(c?.total, st.key).toBe(rows.length);
      expect(c?.done, st.key).toBe(
        rows.filter((r) => r.state === "succeeded" || r.state === "failed" || r.state === "canceled").length,
      );
      expect(c?.jobs.length, st.key).toBe(Math.min(50, rows.length));
      jobsSeen += rows.length;
    }
    expect(jobsSeen).toBeGreaterThan(10); // train, generate and the grade batches of dev and test
  });

  it("selects by dev pass@1 with ties between epochs keeping the earlier one, and reports the test comparison", async () => {
    const sel = await getSelection(t.db, expId);
    expect(sel?.selected).toEqual({ model: "adapter", seed: 1, seedIndex: 0, epoch: 1 });
    const report = (await storedReport(t.db, expId)).body;
    expect(report.outcome.kind).toBe("adapter_selected");
    const test = report.summary.find((r) => r.split === "test");
    expect(test?.base.value).toBe(0);
    expect(test?.sft?.value).toBe(1);
    expect(test?.improved).toBe(test?.n);
    expect(report.protocol.ok).toBe(true);
    expect(report.seeds?.perSeed.map((p) => p.seed)).toEqual([1, 2]);
    expect(report.devCurve.points.length).toBe(4);
    // Every answer of the simulated agent parses: counted per split and model, none lost to the format.
    const testBase = report.parsing?.find((p) => p.split === "test" && p.modelKey === "base");
    expect(testBase?.answers).toBe(test?.n);
    expect(report.parsing?.every((p) => p.unparsed === 0 && p.answers > 0)).toBe(true);
    expect(report.parsing?.some((p) => p.split === "dev" && p.modelKey !== "base")).toBe(true);
  });

  it("counts answers that did not parse per split and model (the report's format check)", async () => {
    const before = await answerParseCounts(t.db, expId);
    const row = before.find((p) => p.split === "test" && p.modelKey === "base");
    await t.db.execute(
      sql`update experiment_generations set parsed = false where experiment_id = ${expId} and split = 'test' and model_key = 'base' and task_id = (select min(task_id) from experiment_generations where experiment_id = ${expId} and split = 'test' and model_key = 'base')`,
    );
    const after = await answerParseCounts(t.db, expId);
    expect(after.find((p) => p.split === "test" && p.modelKey === "base")).toEqual({ ...row, unparsed: 1 });
    await t.db.execute(sql`update experiment_generations set parsed = true where experiment_id = ${expId}`);
  });

  it("refuses a second test evaluation", async () => {
    await expect(claimTestRun(t.db, expId, [{ model: "base" }])).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("two runners advancing one experiment at once (a leadership hand-over) share its one test evaluation", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "two runners", seeds: [3] }));
    const a = createExperimentRunner(s, { autoStart: false });
    const b = createExperimentRunner(s, { autoStart: false });
    const both = { advance: async (x: string) => void (await Promise.all([a.advance(x), b.advance(x)])) };
    const end = await drive(t.db, both, id, fit, tasks, learns);
    expect(end).toEqual({ state: "succeeded", error: null });
    const runs = await t.db.select().from(schema.testRuns).where(eq(schema.testRuns.experimentId, id));
    expect(runs).toHaveLength(1);
    // Still one test run: a claim from outside the stage is refused.
    await expect(claimTestRun(t.db, id, [{ model: "base" }])).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("a tie keeps the base and the report claims no gain", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "tie", seeds: [7] }));
    const runner = createExperimentRunner(s, { autoStart: false });
    const end = await drive(t.db, runner, id, fit, tasks, { fixes: () => false });
    expect(end.state).toBe("succeeded");
    const report = (await storedReport(t.db, id)).body;
    expect(report.outcome.kind).toBe("base_kept");
    expect(report.outcome.headline).toMatch(/no gain is claimed/);
    expect(report.summary.find((r) => r.split === "test")?.sft).toBeNull();
  });

  it("refuses to compare evaluations run under different protocols", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "mismatch", seeds: [9] }));
    const runner = createExperimentRunner(s, { autoStart: false });
    const end = await drive(t.db, runner, id, fit, tasks, {
      fixes: (m) => m !== "base",
      maxNewTokens: (m) => (m === "base" ? 256 : undefined),
    });
    expect(end.state).toBe("failed");
    // Checked when the answers arrive, on dev already: no dev evaluation escapes the protocol.
    expect(end.error).toMatch(/dev_eval:base: protocol mismatch on dev for base: maxNewTokens 256 ≠ 512/);
    expect(await reportByExperiment(t.db, id)).toBeUndefined();
  });

  it("fails the collect stage plainly when no dataset is given and the teacher provider does not exist", async () => {
    const { createExperiment } = await import("../../apps/web/server/experiments/service");
    const { datasetId: _omit, ...config } = baseConfig(splitId, { name: "no-data" });
    const exp = await createExperiment(t.db, config, null);
    const runner = createExperimentRunner(s, { autoStart: false });
    await runner.advance(exp.id);
    await runner.advance(exp.id);
    const [row] = await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, exp.id));
    expect(row?.state).toBe("failed");
    expect(row?.error).toMatch(/collect: no such teacher provider/);
  });
});
