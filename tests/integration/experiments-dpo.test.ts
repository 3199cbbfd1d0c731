import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { listPreferencePairs, listStages, schema, type Db } from "@agentlab/db";
import { formatAnswer, parseStageOutput as parseOutput, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { referenceCollection } from "./helpers/reference-collection";
import { storedReport } from "./helpers/reports";
import { simDpo, type SimDpoCall } from "./helpers/sim-dpo";
import { agentStep, baseConfig, makeAgent, makeServices, makeSplit, type Behaviour } from "./experiments-harness";

// An sft+dpo experiment through the real queue and stage machine to its report. The
// agent is the harness's simulated one (answers and verdicts known in advance, DPO from
// helpers/sim-dpo.ts); the data, the stages, the pairs, the margin filter, the database guard, the
// selection and the report are the server's own.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const part = new Map<string, string>();
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    part.set(r.taskId, r.part);
});
afterAll(async () => t?.drop());

const trainIds = () =>
  [...part]
    .filter(([, p]) => p === "train")
    .map(([k]) => k)
    .sort();
const group = (task: TaskSpec) => Number(task.source_group.replace(/\D/g, ""));

/** A verified SFT snapshot of reference answers for the given train tasks, as the teacher module stores one. */
async function referenceDataset(db: Db, ids: string[]): Promise<string> {
  const col = await referenceCollection(db, { splitId, tasks, taskIds: ids });
  return (await createDataset(s, { name: "reference", splitId, collectionIds: [col] })).id;
}

// Dev and test: the base fixes nothing, SFT seed 1 half the groups (both epochs: the earlier is the
// SFT start), seed 2 a quarter, every DPO epoch of either round three quarters (so DPO ties across
// rounds, seeds and epochs: round 1, seed 1, epoch 1 must win). On train every policy fails its
// first sample of a task and fixes its second, so each train task gives one rejected answer.
const fixesEval = (m: string, task: TaskSpec) => {
  const g = group(task);
  if (m.startsWith("dpo-")) return g % 4 !== 3;
  if (m.startsWith("s1e")) return g % 2 === 0;
  if (m.startsWith("s2e")) return g % 4 === 0;
  return false;
};
const calls: SimDpoCall[] = [];
// The start policy already prefers the chosen answer of every other train task: those pairs are dropped.
const preferred = (taskId: string) => trainIds().indexOf(taskId) % 2 === 0;
const behaviour: Behaviour = {
  fixes: fixesEval,
  fixesSample: (m, task, i) => (part.get(task.id) === "train" ? i === 1 : fixesEval(m, task)),
  dpo: (p) =>
    simDpo({
      read: (sha) => s.artifacts.read(sha),
      margin: (pairId) => (preferred(pairId.split(":")[0] ?? "") ? 1.5 : -0.5),
      calls,
    })(p),
};

async function drive(experimentId: string) {
  const runner = createExperimentRunner(s, { autoStart: false });
  for (let round = 0; round < 150; round++) {
    await runner.advance(experimentId);
    while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    const [row] = await t.db
      .select({ state: schema.experiments.state, error: schema.experiments.error })
      .from(schema.experiments)
      .where(eq(schema.experiments.id, experimentId));
    if (row && row.state !== "running") return row;
  }
  throw new Error("experiment did not finish in 150 rounds");
}

describe("an sft+dpo experiment", () => {
  it("runs SFT → start selection → train samples → pairs → DPO per seed, two rounds, to a three-way report", async () => {
    const train = trainIds();
    const datasetId = await referenceDataset(t.db, train);
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, {
        datasetId,
        method: "sft+dpo",
        dpo: {
          rounds: 2,
          samples: 2,
          epochs: 2,
          beta: 0.2,
          marginFilter: { threshold: 0, mode: "drop", factor: 0.25 },
        },
      }),
      null,
    );
    expect(await drive(exp.id)).toEqual({ state: "succeeded", error: null });
    const stages = new Map((await listStages(t.db, exp.id)).map((r) => [r.key, r]));
    const out = <K extends "dpo_start" | "pairs" | "dpo">(key: string, kind: K) =>
      parseOutput(kind, key, stages.get(key)?.output);

    // Round 1 starts from the SFT start (dev: s1e1 = s1e2 > base, the earlier epoch), round 2 from round 1's dev-best DPO epoch.
    expect(out("dpo_start:r1", "dpo_start")?.start).toEqual({ model: "adapter", seed: 1, seedIndex: 0, epoch: 1 });
    expect(out("dpo_start:r2", "dpo_start")?.start).toEqual({
      model: "dpo",
      seed: 1,
      seedIndex: 0,
      round: 1,
      epoch: 1,
    });

    // Pairs: one per train task (the failing first sample against the reference), every other one
    // dropped as already preferred, each round's kept pairs stored with their round.
    const kept = train.filter((id) => !preferred(id));
    for (const round of [1, 2]) {
      const pairs = out(`pairs:r${round}`, "pairs");
      expect(pairs).toMatchObject({
        built: train.length,
        stored: kept.length,
        stats: {
          kept: kept.length,
          dropped: train.length - kept.length,
          downweighted: 0,
          byFailingLayer: { hidden: kept.length },
          byChosenSource: { reference: kept.length },
          byRejectedSource: { on_policy: kept.length },
          marginKept: { max: -0.5 },
          marginDropped: { min: 1.5 },
        },
      });
      const rows = await listPreferencePairs(t.db, { experimentId: exp.id, round });
      expect(rows.map((r) => r.taskKey).sort()).toEqual(kept);
      for (const r of rows) {
        expect(part.get(r.taskKey)).toBe("train");
        expect(r.rejectedVerdict).toBe("fail_hidden");
        expect(r.failingTests).toEqual(["tests/test_hidden.py::test_fixed"]);
        expect(r.rejectedSample).toBe(0);
        expect(r.marginBefore).toBe(-0.5);
        expect(r.chosenText).toBe(formatAnswer(tasks.get(r.taskKey)?.reference ?? []));
      }
    }

    // The score job saw every built pair; each DPO job trained on the kept ones only, from the round's start.
    const scores = calls.filter((c) => c.payload.spec.score_only);
    const runs = calls.filter((c) => !c.payload.spec.score_only);
    expect(scores.map((c) => [c.start, c.pairIds.length])).toEqual([
      ["s1e1", train.length],
      ["dpo-s1r1e1", train.length],
    ]);
    expect(runs.map((c) => [c.start, c.payload.spec.seed]).sort()).toEqual([
      ["dpo-s1r1e1", 1],
      ["dpo-s1r1e1", 2],
      ["s1e1", 1],
      ["s1e1", 2],
    ]);
    for (const r of runs) {
      expect(r.pairIds.map((id) => id.split(":")[0]).sort()).toEqual(kept);
      expect(r.payload.spec).toMatchObject({ beta: 0.2, epochs: 2 });
    }
    expect(out("dpo:s2:r2", "dpo")?.snapshots?.map((x) => x.epoch)).toEqual([1, 2]);

    // Selection among base, SFT and DPO: every DPO epoch ties, the simplest (round 1, seed 1, epoch 1) wins.
    const report = (await storedReport(t.db, exp.id)).body;
    expect(report.outcome.selected).toEqual({ model: "dpo", seed: 1, seedIndex: 0, round: 1, epoch: 1 });
    expect(report.selection.table.filter((r) => r.ref.model === "dpo")).toHaveLength(8);
    const dpo = report.dpo;
    expect(dpo?.rounds.map((r) => [r.round, r.policyLabel, r.stats?.kept])).toEqual([
      [1, "seed 1 · epoch 1", kept.length],
      [2, "DPO r1 · seed 1 · epoch 1", kept.length],
    ]);
    expect(dpo?.selectedSft).toEqual({ model: "adapter", seed: 1, seedIndex: 0, epoch: 1 });
    expect(dpo?.selectedDpo).toEqual(report.outcome.selected);
    // Test: base 0, SFT half, DPO three quarters of the groups (20 test tasks, 2 per group).
    const test = [...part].filter(([, p]) => p === "test").map(([id]) => tasks.get(id));
    const rate = (f: (task: TaskSpec) => boolean) => test.filter((x) => x && f(x)).length / test.length;
    const sftRate = rate((x) => group(x) % 2 === 0);
    const dpoRate = rate((x) => group(x) % 4 !== 3);
    expect(dpo?.comparisons.map((c) => [c.aLabel, c.bLabel, c.row.stats?.delta])).toEqual([
      ["base", "seed 1 · epoch 1", sftRate],
      ["base", "DPO r1 · seed 1 · epoch 1", dpoRate],
      ["seed 1 · epoch 1", "DPO r1 · seed 1 · epoch 1", dpoRate - sftRate],
    ]);
    expect(report.summary[1].stats?.delta).toBe(dpoRate);
    // Answer side: both texts of every stored pair were trained on, and none copies a test reference.
    const stored = await t.db
      .select({ id: schema.preferencePairs.id })
      .from(schema.preferencePairs)
      .where(eq(schema.preferencePairs.experimentId, exp.id));
    expect(report.answerContamination?.answers).toMatchObject({
      dpo_chosen: stored.length,
      dpo_rejected: stored.length,
    });
    expect(report.answerContamination?.test.exactPairs).toBe(0);
    // Train answers are generated and graded but never compared in the report.
    expect(report.tasks.every((r) => r.split !== ("train" as string))).toBe(true);
    const trainRows = await t.db
      .select({ k: schema.evaluations.modelKey })
      .from(schema.evaluations)
      .where(and(eq(schema.evaluations.experimentId, exp.id), eq(schema.evaluations.split, "train")));
    expect(new Set(trainRows.map((r) => r.k))).toEqual(new Set(["s1e1", "dpo-s1r1e1"]));
    expect(trainRows).toHaveLength(2 * 2 * train.length);
  });

  it("refuses DPO settings on a plain SFT recipe, naming the field", async () => {
    await expect(createExperiment(t.db, baseConfig(splitId, { dpo: { beta: 0.1 } }), null)).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: ["dpo"] })],
    });
  });
});
