import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, asc, eq, sql } from "drizzle-orm";
import { recentThroughput, reportByExperiment, schema } from "@agentlab/db";
import {
  comparePaired,
  estimateWork,
  evaluationWork,
  reportToCsv,
  reportToMarkdown,
  sha256Hex,
  type ExperimentConfigInput,
  type ExperimentReport,
  type TaskSpec,
} from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import {
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  makeSplit,
  received,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

// Multi-sample evaluation end to end: n = 4 answers per task stored with their index and
// seed, graded one by one, the report on per-task pass rates; a second experiment under the same
// protocol reuses every stored answer instead of generating again, a different seed does not.

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

const N = 4;
const h = (id: string) => Number.parseInt(sha256Hex(id).slice(0, 6), 16);
// The base fixes one answer in four of every task, each adapter three in four: rates 0.25 vs 0.75.
const fixesSample = (m: string, task: TaskSpec, i: number) => (h(task.id) + i) % N < (m === "base" ? 1 : 3);
const sampled: Behaviour = { fixes: () => false, fixesSample };

const config = (over: Partial<ExperimentConfigInput["evaluation"]> = {}): ExperimentConfigInput =>
  baseConfig(splitId, {
    seeds: [1],
    training: { epochs: 2 },
    evaluation: {
      graderVersion: "sim-grader/1",
      samples: N,
      decoding: { doSample: true, temperature: 0.8, topP: 0.95 },
      seed: 5,
      answerCache: "shared",
      ...over,
    },
  });

const generateJobs = (experimentId: string) =>
  t.db
    .select({ id: schema.jobs.id, key: schema.jobs.dedupeKey })
    .from(schema.jobs)
    .where(and(eq(schema.jobs.experimentId, experimentId), eq(schema.jobs.type, "generate")));

async function run(cfg: ExperimentConfigInput) {
  const id = await startExperiment(s, cfg);
  const runner = createExperimentRunner(s, { autoStart: false });
  const end = await drive(t.db, runner, id, fit, tasks, sampled);
  await runner.stop();
  expect(end).toMatchObject({ state: "succeeded", error: null });
  const report = (await reportByExperiment(t.db, id))?.body as ExperimentReport | undefined;
  if (!report) throw new Error("no report");
  return { id, report };
}

describe("multi-sample evaluation", () => {
  let first: Awaited<ReturnType<typeof run>>;

  it("generates and stores n answers per task with their seeds and reports on pass rates", async () => {
    received.generate.length = 0;
    first = await run(config());
    expect(received.generate.length).toBeGreaterThan(0);
    for (const spec of received.generate) expect(spec).toMatchObject({ samples: N, seed: 5, do_sample: true });
    const rows = await t.db
      .select()
      .from(schema.generations)
      .where(and(eq(schema.generations.experimentId, first.id), eq(schema.generations.split, "test")))
      .orderBy(asc(schema.generations.taskId), asc(schema.generations.sampleIndex));
    const testTasks = new Set(rows.map((r) => r.taskId));
    const models = new Set(rows.map((r) => r.modelKey));
    expect(rows.length).toBe(testTasks.size * models.size * N);
    expect(
      rows
        .filter((r) => r.modelKey === "base")
        .slice(0, N)
        .map((r) => r.sampleIndex),
    ).toEqual([0, 1, 2, 3]);
    expect(rows.every((r) => r.seed !== null && r.cacheKey?.length === 64 && r.gradeState === "graded")).toBe(true);

    const r = first.report;
    expect(r.samples).toMatchObject({ samples: N, decoding: { temperature: 0.8, topP: 0.95, seed: 5 } });
    const test = r.summary[1];
    expect(test.base.value).toBeCloseTo(0.25, 12);
    expect(test.sft?.value).toBeCloseTo(0.75, 12);
    // The paired quantity is each task's pass rate: Δ = 0.5 exactly, tested by the clustered sign-flip test.
    expect(test.stats?.delta).toBeCloseTo(0.5, 12);
    expect(test.stats?.test).toMatch(/^cluster sign-flip/);
    const pairs = (r.taskViews ?? [])
      .filter((v) => v.split === "test")
      .flatMap((v) => v.rows)
      .map((x) => ({ group: x.group, base: x.baseRate ?? -1, treated: x.otherRate ?? -1 }));
    expect(comparePaired(pairs, { iterations: 500, seed: 3 }).delta).toBeCloseTo(0.5, 12);
    // pass@k: with n = 4 only k = 1; it is the mean over samples.
    const table = r.samples?.passAtK.find((p) => p.split === "test" && p.modelKey === "base");
    expect(table?.rows.map((x) => x.k)).toEqual([1]);
    expect(table?.rows[0]?.value).toBeCloseTo(0.25, 12);
    // Every task's rate moved by +0.5: one histogram bin holds them all.
    const bins = r.samples?.histogram?.bins ?? [];
    expect(bins.length).toBe(2 * N + 1);
    expect(bins.find((b) => b.change === 0.5)?.count).toBe(test.n);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(test.n);
    expect(r.samples?.mde?.samples).toBe(N);
    // The per-task view carries every sample's verdict.
    const row = r.taskViews?.find((v) => v.split === "test")?.rows[0];
    expect(row?.baseSamples?.map((x) => x.index)).toEqual([0, 1, 2, 3]);
    expect(row?.baseSamples?.filter((x) => x.verdict === "pass").length).toBe(1);
    expect(row?.otherSamples?.filter((x) => x.verdict === "pass").length).toBe(3);
    // The exports say the same.
    expect(reportToMarkdown(r)).toContain(`## Samples: ${N} answers per task`);
    expect(reportToMarkdown(r)).toMatch(/\| test \| base \| 25\.0% \|/);
    expect(reportToCsv(r).split("\n")[0]).toMatch(/,base_rate,sft_rate,base_samples,sft_samples$/);
    expect(reportToCsv(r)).toContain("1/4 (");
  });

  it("reuses every stored answer in a second experiment under the same protocol", async () => {
    received.generate.length = 0;
    const second = await run(config());
    // The simulated trainer's adapters hash the same for the same seed and epoch, so even they hit the cache.
    expect(await generateJobs(second.id)).toEqual([]);
    expect(received.generate).toEqual([]);
    const stages = await t.db
      .select({ key: schema.experimentStages.key, output: schema.experimentStages.output })
      .from(schema.experimentStages)
      .where(eq(schema.experimentStages.experimentId, second.id));
    const testStage = stages.find((x) => x.key === "test_eval")?.output as { reused?: Record<string, number> };
    const testRows = first.report.summary[1].n * N;
    expect(testStage.reused?.base).toBe(testRows);
    // Same answers, same verdicts, same numbers.
    expect(second.report.summary[1].stats?.delta).toBe(first.report.summary[1].stats?.delta);
    expect(second.report.samples?.passAtK).toEqual(first.report.samples?.passAtK);
  });

  it("generates again when the experiment keeps to its own answers (the default)", async () => {
    received.generate.length = 0;
    const own = await run(config({ answerCache: "experiment" }));
    expect((await generateJobs(own.id)).length).toBeGreaterThan(0);
    expect(own.report.summary[1].stats?.delta).toBe(first.report.summary[1].stats?.delta);
  });

  it("generates again when the protocol differs (positive control: another sampling seed)", async () => {
    received.generate.length = 0;
    const third = await run(config({ seed: 6 }));
    expect((await generateJobs(third.id)).length).toBeGreaterThan(0);
    for (const spec of received.generate) expect(spec).toMatchObject({ samples: N, seed: 6 });
  });

  it("measures recent throughput for the form's estimate from the finished jobs", async () => {
    const t0 = await recentThroughput(t.db);
    const answers = await t.db
      .select({ n: sql<number>`sum(jsonb_array_length(${schema.jobs.result}->'outputs'))::int` })
      .from(schema.jobs)
      .where(and(eq(schema.jobs.type, "generate"), eq(schema.jobs.state, "succeeded")));
    expect(t0.generate?.items).toBe(Number(answers[0]?.n));
    expect(t0.grade?.items).toBeGreaterThan(0);
    const work = evaluationWork({ devTasks: 10, testTasks: 10, seeds: 1, epochs: 2, samples: N });
    // The simulated agent never said hello, so it is not online: no estimate, and it says why.
    expect(estimateWork(work, t0)).toEqual({ kind: "unknown", reason: "no agent is online" });
    await t.db.update(schema.agents).set({ online: true }).where(eq(schema.agents.id, fit.agentId));
    const e = estimateWork(work, await recentThroughput(t.db));
    expect(e.kind).toBe("estimate");
  });

  it("refuses more than one answer per task with greedy decoding", async () => {
    await expect(startExperiment(s, config({ decoding: { doSample: false } }))).rejects.toThrow(
      /samples > 1 needs sampled decoding/,
    );
  });
});
