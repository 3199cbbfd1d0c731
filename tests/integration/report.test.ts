import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import { schema } from "@agentlab/db";
import { reportToMarkdown, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { splitTasks } from "../../apps/web/server/experiments/tasks";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { storedReport } from "./helpers/reports";
import {
  adapterSha,
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  makeSplit,
  makeUser,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

// The report (header, per-task view) on a real run of the stage machine: the header's facts come from the rows
// the experiment left, the in-process verdicts are counted per split and model, the per-task view
// is never empty when the base is kept, and taskDetail returns parsed answers and grader output.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const createCaller = createCallerFactory(appRouter);
let caller: ReturnType<typeof createCaller>;
let inProcessTest: string[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  const u = await makeUser(t.db, "viewer");
  const ctx: Context = {
    ...s,
    viewer: { userId: u.id, email: u.email, name: u.name, role: "viewer", via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  };
  caller = createCaller(ctx);
  // Two test tasks and one dev task need in-process grading (as an audit would have found).
  inProcessTest = (await splitTasks(t.db, splitId, "test")).slice(0, 2).map((x) => x.id);
  const dev = (await splitTasks(t.db, splitId, "dev")).slice(0, 1).map((x) => x.id);
  const [split] = await t.db
    .select({ poolId: schema.splits.poolId })
    .from(schema.splits)
    .where(eq(schema.splits.id, splitId));
  await t.db
    .update(schema.tasks)
    .set({ gradingIsolation: "in_process" })
    .where(and(eq(schema.tasks.poolId, split?.poolId ?? ""), inArray(schema.tasks.taskId, [...inProcessTest, ...dev])));
});
afterAll(async () => t?.drop());

const learns: Behaviour = { fixes: (m) => m.startsWith("s1e") };
const run = async (name: string, behaviour: Behaviour, seeds = [1, 2]) => {
  const id = await startExperiment(s, baseConfig(splitId, { name, seeds }));
  expect(await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, behaviour)).toEqual({
    state: "succeeded",
    error: null,
  });
  const row = await storedReport(t.db, id);
  return { id, reportId: row.id, report: row.body };
};

describe("report header, isolation and per-task view", () => {
  it("states what was compared, from the stored rows", async () => {
    const { id, report } = await run("header", learns);
    const h = report.header;
    const [split] = await t.db.select().from(schema.splits).where(eq(schema.splits.id, splitId));
    expect(h?.split).toMatchObject({ id: splitId, manifestHash: split?.manifestHash, counts: split?.counts });
    expect(h?.adapters.map((a) => [a.seed, a.epoch, a.sha256 === adapterSha(a.seed, a.epoch), a.method])).toEqual([
      [1, 1, true, "lora-fp32"],
      [1, 2, true, "lora-fp32"],
      [2, 1, true, "lora-fp32"],
      [2, 2, true, "lora-fp32"],
    ]);
    expect(h?.adapters.find((a) => a.selected)).toMatchObject({ seed: 1, epoch: 1, onTest: true });
    const trainJobs = await t.db
      .select({ id: schema.jobs.id })
      .from(schema.jobs)
      .where(and(eq(schema.jobs.experimentId, id), eq(schema.jobs.type, "train")));
    expect(h?.trainJobs.map((j) => j.jobId).sort()).toEqual(trainJobs.map((j) => j.id).sort());
    expect(h?.jobs.find((j) => j.type === "train")?.count).toBe(2);
    expect(h?.hardware.map((a) => [a.id, a.jobTypes])).toEqual([[fit.agentId, ["generate", "grade-batch", "train"]]]);
    expect(h?.baseModel).toMatchObject({
      ref: "/models/tiny",
      weightsSha256: report.protocol.protocol?.model.weightsSha256,
    });
    // The harness's dataset stage names a dataset id without a row: the header says none instead of inventing one.
    expect(h?.dataset).toBeNull();
    expect(h?.experiment.durationS).toBeGreaterThanOrEqual(0);
    expect(reportToMarkdown(report)).toContain("## What was compared");
  });

  it("counts in-process verdicts per split and model, and only those (the rest come from the judge)", async () => {
    const { report } = await run("isolation", learns);
    const test = report.isolation?.filter((i) => i.split === "test") ?? [];
    expect(test.map((i) => [i.modelKey, i.inProcess])).toEqual([
      ["base", 2],
      ["s1e1", 2],
      ["s2e1", 2],
    ]);
    expect(report.isolation?.filter((i) => i.split === "dev").every((i) => i.inProcess === 1)).toBe(true);
    const view = report.taskViews?.find((v) => v.split === "test");
    expect(
      view?.rows
        .filter((r) => r.inProcess)
        .map((r) => r.taskId)
        .sort(),
    ).toEqual([...inProcessTest].sort());
  });

  it("base kept: the per-task view shows base vs the best dev adapter on dev and test, and says so", async () => {
    const { report } = await run("kept", { fixes: () => false }, [7]);
    expect(report.outcome.kind).toBe("base_kept");
    expect(report.tasks.filter((r) => r.split === "test")).toEqual([]);
    const [dev, test] = report.taskViews ?? [];
    expect(dev?.rows.length).toBeGreaterThan(0);
    expect(test?.rows.length).toBe((await splitTasks(t.db, splitId, "test")).length);
    expect(test?.shown).toMatch(/no gain is claimed/);
  });

  it("taskDetail returns the buggy file, each answer's parsed files and its grader output", async () => {
    const { reportId, report } = await run("detail", learns, [1]);
    const row = report.taskViews?.find((v) => v.split === "test")?.rows.find((r) => r.category === "improved");
    if (!row) throw new Error("no improved task");
    const d = await caller.reports.taskDetail({
      reportId,
      split: "test",
      taskId: row.taskId,
      modelKeys: ["base", "s1e1"],
    });
    const task = tasks.get(row.taskId);
    expect(d.buggy.map((f) => f.content)).toEqual(task?.files.filter((f) => f.role === "main").map((f) => f.content));
    const base = d.answers.find((a) => a.modelKey === "base");
    const sft = d.answers.find((a) => a.modelKey === "s1e1");
    expect(base?.files?.map((f) => f.content)).toEqual(d.buggy.map((f) => f.content)); // the base echoes the buggy file
    expect(sft?.files?.map((f) => f.content)).toEqual(task?.reference.map((r) => r.content));
    expect(base?.grade?.tests.filter((x) => x.outcome === "failed").map((x) => x.id)).toEqual([
      "tests/test_hidden.py::test_fixed",
    ]);
    expect(sft?.grade?.tests.every((x) => x.outcome === "passed")).toBe(true);
    expect(d.answers.map((a) => a.modelKey).sort()).toEqual(["base", "s1e1"]);
  });
});
