import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { schema, updateStage } from "@agentlab/db";
import { answerContaminated, copiedAnswers, reportToMarkdown, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { referenceCollection } from "./helpers/reference-collection";
import { storedReport } from "./helpers/reports";
import { baseConfig, drive, makeAgent, makeServices, makeSplit, startExperiment } from "./experiments-harness";

// Answer-side contamination on a real run: SFT samples are made for train tasks only (the database
// refuses others), but a train task's answer can be a test task's reference all the same — the
// learnable family's situation. The report compares every trained-on answer with the test and dev
// references and marks the report contaminated when one is copied.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const ids: Record<"train" | "dev" | "test", string[]> = { train: [], dev: [], test: [] };
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    ids[r.part].push(r.taskId);
  for (const k of Object.values(ids)) k.sort();
});
afterAll(async () => t?.drop());

/** A verified SFT snapshot with one sample per given train task, whose answer is `answerOf(task)`'s reference. */
async function dataset(name: string, train: string[], answerOf: (trainId: string) => TaskSpec) {
  const shown = new Map(tasks);
  for (const id of train) {
    const own = tasks.get(id);
    if (own) shown.set(id, { ...own, reference: answerOf(id).reference });
  }
  const col = await referenceCollection(t.db, { splitId, tasks: shown, taskIds: train });
  return createDataset(s, { name, splitId, collectionIds: [col] });
}

async function reportWith(name: string, ds: Awaited<ReturnType<typeof dataset>>) {
  const id = await startExperiment(s, baseConfig(splitId, { name, seeds: [1], datasetId: ds.id }));
  await updateStage(s.db, id, "dataset", {
    state: "succeeded",
    output: { datasetId: ds.id, datasetHash: ds.hash, samples: 1, tasks: 1 },
  });
  const runner = createExperimentRunner(s, { autoStart: false });
  expect(await drive(t.db, runner, id, fit, tasks, { fixes: (m) => m.startsWith("s1e") })).toEqual({
    state: "succeeded",
    error: null,
  });
  return (await storedReport(t.db, id)).body;
}

const taskOf = (id: string) => {
  const x = tasks.get(id);
  if (!x) throw new Error(`no task ${id}`);
  return x;
};

describe("answer-side contamination in the report", () => {
  it("an SFT snapshot whose answers are the test references is reported as contaminated (positive control)", async () => {
    const train = ids.train.slice(0, ids.test.length);
    const ds = await dataset("leaky", train, (id) => taskOf(ids.test[train.indexOf(id)] ?? ""));
    const report = await reportWith("leaky answers", ds);
    const a = report.answerContamination;
    expect(a?.answers.sft).toBe(train.length);
    expect(a && copiedAnswers(a.test)).toBe(ids.test.length);
    expect(a && answerContaminated(a)).toBe(true);
    const md = reportToMarkdown(report);
    expect(md).toContain("**CONTAMINATED:");
    expect(md).toContain(`${ids.test.length} of ${ids.test.length} test tasks' reference answers were trained on`);
  });

  it("the train tasks' own answers leave the report clean (negative control)", async () => {
    const train = ids.train.slice(0, 6);
    const report = await reportWith("own answers", await dataset("own", train, taskOf));
    const a = report.answerContamination;
    expect(a?.answers.sft).toBe(train.length);
    expect(a && copiedAnswers(a.test)).toBe(0);
    expect(a && copiedAnswers(a.dev)).toBe(0);
    expect(a && answerContaminated(a)).toBe(false);
    expect(reportToMarkdown(report)).not.toContain("CONTAMINATED");
  });
});
