import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { createSplit, importPool, listGenerations, listStages, queryRows, schema, stageJobs } from "@agentlab/db";
import { GRADE_BATCH_MAX_ITEMS, GradeBatchJobPayload, JOB_CONTRACTS, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import type { Services } from "../../apps/web/server/services";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { createTestDatabase, type TestDb } from "./helpers/db";
import {
  agentStep,
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

// The grading half: an evaluation grades its answers in `grade-batch` jobs of at most
// 64 (tens of jobs, not thousands), an answer its batch left without a verdict is retried alone
// as a single `grade` job, and the batches' dedupe keys survive a lost link (a restart between
// enqueueing and recording). The agent is the harness's simulated one; the server side is real.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const part = new Map<string, string>();
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  // 160 tasks: 40 dev and 40 test, so an evaluation has enough answers to fill batches.
  const pool = makePool(160, 2);
  const res = await importPool(t.db, { name: "batches", lines: [new TextEncoder().encode(toJsonl(pool))] });
  if (!res.ok) throw new Error("pool import failed");
  splitId = (await createSplit(t.db, { poolId: res.poolId, seed: 1, devRatio: 0.25, testRatio: 0.25 })).split.id;
  tasks = new Map(pool.map((x) => [x.id, x]));
  fit = await makeAgent(t.db);
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    part.set(r.taskId, r.part);
}, 60_000);
const ids = (p: string) =>
  [...part]
    .filter(([, v]) => v === p)
    .map(([k]) => k)
    .sort();
afterAll(async () => t?.drop());

const jobsOf = (experimentId: string, type: string) =>
  t.db
    .select()
    .from(schema.jobs)
    .where(and(eq(schema.jobs.experimentId, experimentId), eq(schema.jobs.type, type)));

describe("an evaluation grades in batches", () => {
  it("sees at most one job per 32 answers, each batch ≤ 64 items, every answer graded once", async () => {
    const learns: Behaviour = { fixes: (m, task) => m.startsWith("s1e") && task.id.endsWith("0") };
    const id = await startExperiment(s, baseConfig(splitId, { name: "batched", seeds: [1] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, learns);
    expect(end).toEqual({ state: "succeeded", error: null });
    const gens = [
      ...(await listGenerations(t.db, { experimentId: id, split: "dev" })),
      ...(await listGenerations(t.db, { experimentId: id, split: "test" })),
    ];
    expect(gens.every((g) => g.gradeState === "graded" && g.gradeJobIds.length === 1)).toBe(true);
    const batches = await jobsOf(id, "grade-batch");
    expect(await jobsOf(id, "grade")).toHaveLength(0);
    // dev: base (40 answers) and the seed's 2 epochs (80); test: base and the best epoch (80).
    expect(gens.length).toBe(200);
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(gens.length / 32));
    const items = batches.map((b) => GradeBatchJobPayload.parse(b.payload).items.length);
    expect(Math.max(...items)).toBeLessThanOrEqual(GRADE_BATCH_MAX_ITEMS);
    expect(items.reduce((a, b) => a + b, 0)).toBe(gens.length);
    // Per evaluation stage, too: no stage's answers are spread over more than one job per 32.
    for (const st of await listStages(t.db, id)) {
      if (!st.kind.endsWith("_eval")) continue;
      const ids = new Set((await stageJobs(t.db, st.jobIds)).map((j) => j.id));
      const answers = gens.filter((g) => g.gradeJobIds.some((j) => ids.has(j)));
      const own = batches.filter((b) => ids.has(b.id));
      expect(own.length, st.key).toBeLessThanOrEqual(Math.max(1, Math.ceil(answers.length / 32)));
    }
    // The verdicts are the harness grader's: only the trained model's fixes pass.
    const ev = await t.db.select().from(schema.evaluations).where(eq(schema.evaluations.experimentId, id));
    expect(ev).toHaveLength(200);
    expect(ev.filter((e) => e.verdict === "pass").every((e) => e.modelKey.startsWith("s1e"))).toBe(true);
    expect(ev.some((e) => e.verdict === "pass")).toBe(true);
  });

  it("retries an answer its batch failed alone, as a single grade job, and no other answer", async () => {
    const flaky = new Set<string>();
    const failedOnce = new Set<string>();
    const behaviour: Behaviour = {
      fixes: (m) => m.startsWith("s1e"),
      // The first grading of one dev and one test answer of the base model fails in its batch.
      gradeInfraError: (model, taskId) => {
        const k = `${model}:${taskId}`;
        if (!flaky.has(k) || failedOnce.has(k)) return false;
        failedOnce.add(k);
        return true;
      },
    };
    for (const x of [...ids("dev").slice(0, 2), ...ids("test").slice(0, 1)]) flaky.add(`base:${x}`);
    const id = await startExperiment(s, baseConfig(splitId, { name: "retry alone", seeds: [1] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, behaviour);
    expect(end).toEqual({ state: "succeeded", error: null });
    expect(failedOnce).toEqual(flaky);
    const gens = [
      ...(await listGenerations(t.db, { experimentId: id, split: "dev" })),
      ...(await listGenerations(t.db, { experimentId: id, split: "test" })),
    ];
    const retried = gens.filter((g) => g.gradeJobIds.length > 1);
    // Exactly the answers whose first grading failed got a second job (the positive control: the rest did not).
    expect(retried.map((g) => `${g.modelKey}:${g.taskId}`).sort()).toEqual([...failedOnce].sort());
    expect(gens.every((g) => g.gradeState === "graded")).toBe(true);
    const singles = await jobsOf(id, "grade");
    expect(singles).toHaveLength(failedOnce.size);
    for (const g of retried) {
      const [first, second] = await stageJobs(t.db, g.gradeJobIds);
      const byId = new Map([first, second].map((j) => [j?.id, j]));
      const batch = byId.get(g.gradeJobIds[0]);
      const single = byId.get(g.gradeJobIds[1]);
      expect(GradeBatchJobPayload.safeParse(batch?.payload).success).toBe(true);
      // Alone: the single job carries this answer's task and nothing else.
      expect(JOB_CONTRACTS.grade.payload.parse(single?.payload).task.id).toBe(g.taskId);
    }
  });

  it("enqueues the same batches again when their links were lost (a restart before recording them)", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "lost links", seeds: [1] }));
    const runner = createExperimentRunner(s, { autoStart: false });
    const behaviour: Behaviour = { fixes: () => false };
    // Generate, store, and enqueue the first evaluation's batches; the agent answers generate jobs only.
    let batches: { id: string }[] = [];
    for (let round = 0; round < 10 && batches.length === 0; round++) {
      await runner.advance(id);
      batches = await jobsOf(id, "grade-batch");
      if (batches.length) break;
      while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    }
    expect(batches.length).toBeGreaterThan(0);
    const linked = async () =>
      queryRows<{ job: string }>(
        t.db,
        sql`select distinct unnest(grade_job_ids)::text as job from experiment_generations where experiment_id = ${id}`,
      );
    expect((await linked()).map((r) => r.job).sort()).toEqual(batches.map((b) => b.id).sort());
    await queryRows(t.db, sql`update experiment_generations set grade_job_ids = '{}' where experiment_id = ${id}`);
    await runner.advance(id);
    // Same items, same dedupe keys: the links point at the jobs that exist, and no job was added.
    expect((await jobsOf(id, "grade-batch")).map((b) => b.id).sort()).toEqual(batches.map((b) => b.id).sort());
    expect((await linked()).map((r) => r.job).sort()).toEqual(batches.map((b) => b.id).sort());
    const end = await drive(t.db, runner, id, fit, tasks, behaviour);
    expect(end).toEqual({ state: "succeeded", error: null });
  });
});
