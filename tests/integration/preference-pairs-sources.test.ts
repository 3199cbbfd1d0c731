import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { finishAudit, listPreferencePairs, listStages, nearMissAudits, schema, type Db } from "@agentlab/db";
import { browsePreferencePairs } from "@agentlab/db/queries/pair-browser";
import {
  DpoJobPayload,
  DpoPairLine,
  dpoJobPayload,
  dpoRecipeOf,
  ExperimentConfig,
  formatAnswer,
  parseStageOutput,
  type AuditResult,
  type TaskSpec,
} from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { referenceCollection } from "./helpers/reference-collection";
import { simDpo, simScore, type SimDpoCall, type SimScoreCall } from "./helpers/sim-dpo";
import { agentStep, baseConfig, makeAgent, makeServices, makeSplit, type Behaviour } from "./experiments-harness";

// The pair sources through the real stage machine (simulated agent): near-miss pairs from the
// killed mutants the admission audit stored, on-policy same-prompt pairs from the start policy's
// own passing and failing samples, each pair recording its source; dev tasks have audits with
// killed mutants too (the positive control: the material exists), and none of them gives a pair.
// Then the RFT control arm: the same stages, its training jobs the SFT term alone on the same pairs.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const part = new Map<string, string>();
const rowOf = new Map<string, string>();
const calls: SimDpoCall[] = [];
const scoreCalls: SimScoreCall[] = [];
let behaviour: Behaviour;

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  for (const r of await t.db
    .select()
    .from(schema.splitAssignments)
    .where(eq(schema.splitAssignments.splitId, splitId))) {
    part.set(r.taskId, r.part);
    rowOf.set(r.taskId, r.taskRowId);
  }
  behaviour = {
    fixes: () => false,
    // On train every policy fails its first sample of a task and fixes its second; on dev the SFT
    // epochs fix every task and the base none, so DPO starts from an SFT adapter.
    fixesSample: (m, task, i) => (part.get(task.id) === "train" ? i === 1 : /^s\de/.test(m)),
    dpo: (p) => simDpo({ read: (sha) => s.artifacts.read(sha), margin: () => -0.5, calls })(p),
    // Held-out dev pairs: epoch 1 keeps the chosen answers likely, epoch 2 displaces them.
    score: (p) =>
      simScore({
        read: (sha) => s.artifacts.read(sha),
        delta: (epoch) => (epoch === 1 ? { chosen: 0.5, rejected: -1 } : { chosen: -2, rejected: -3 }),
        calls: scoreCalls,
      })(p),
  };
});
afterAll(async () => t?.drop());

const idsOf = (p: string) =>
  [...part]
    .filter(([, v]) => v === p)
    .map(([k]) => k)
    .sort();

async function referenceDataset(db: Db, ids: string[]): Promise<string> {
  const col = await referenceCollection(db, { splitId, tasks, taskIds: ids });
  return (await createDataset(s, { name: `reference-${Math.random()}`, splitId, collectionIds: [col] })).id;
}

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

const mutantOf = (task: TaskSpec, n: number, verdict: "fail_hidden" | "fail_public") => {
  const ref = task.reference[0];
  if (!ref) throw new Error(`task ${task.id} has no reference`);
  return {
    operator: "binop",
    path: ref.path,
    line: n,
    description: `mutant ${n}`,
    source: `${ref.content}\n# mutant ${n}\n`,
    verdict,
    failingTests: ["tests/test_hidden.py::test_fixed"],
  };
};

/** A passed admission audit of the task with two killed mutants, stored the way the sync loop stores one. */
async function storeAudit(taskId: string): Promise<string> {
  const task = tasks.get(taskId);
  const taskRowId = rowOf.get(taskId);
  if (!task || !taskRowId) throw new Error(`no task ${taskId}`);
  const [row] = await t.db
    .insert(schema.taskAudits)
    .values({ taskRowId, sandbox: "process", graderVersion: "test" })
    .returning({ id: schema.taskAudits.id });
  if (!row) throw new Error("no audit row");
  const result: AuditResult = {
    status: "passed",
    reasons: [],
    referenceVerdicts: ["pass", "pass", "pass"],
    buggyVerdict: "fail_hidden",
    buggyDetail: [],
    expectedTestIds: ["tests/test_hidden.py::test_fixed"],
    mutantsTotal: 2,
    mutantsKilled: 2,
    mutationScore: 1,
    surviving: [],
    killed: [mutantOf(task, 1, "fail_public"), mutantOf(task, 2, "fail_hidden")],
    buggyFailingTests: ["tests/test_hidden.py::test_fixed"],
    unsandboxed: true,
    isolation: "judge",
    isolationReason: "",
    needsInProcess: false,
  };
  expect(await finishAudit(t.db, row.id, { status: "passed", result })).toBe(true);
  return row.id;
}

describe("pair sources", () => {
  it("the audit stores its killed mutants once (their own table, not the result), per part of the split", async () => {
    const train = idsOf("train");
    const dev = idsOf("dev").slice(0, 2);
    for (const id of [...train, ...dev]) await storeAudit(id);
    const mutants = await t.db.select().from(schema.taskAuditMutants);
    expect(mutants).toHaveLength(2 * (train.length + dev.length));
    const [audit] = await t.db.select().from(schema.taskAudits).limit(1);
    expect(audit?.result?.killed).toEqual([]);
    expect(audit?.result?.buggyFailingTests).toEqual(["tests/test_hidden.py::test_fixed"]);
    // Positive control for the train-only guard: the dev tasks do have near-miss material.
    expect([...(await nearMissAudits(t.db, { splitId, part: "dev" })).keys()].sort()).toEqual(dev);
    const onTrain = await nearMissAudits(t.db, { splitId, part: "train" });
    expect([...onTrain.keys()].sort()).toEqual(train);
    expect(onTrain.get(train[0] ?? "")?.killed.map((m) => m.verdict)).toEqual(["fail_public", "fail_hidden"]);
  });

  it("builds near-miss and on-policy pairs on train tasks only, each recording its source", async () => {
    const train = idsOf("train");
    const datasetId = await referenceDataset(t.db, train);
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, {
        name: "sources",
        datasetId,
        method: "sft+dpo",
        dpo: { rounds: 1, samples: 2, epochs: 2, pairSources: ["on_policy", "near_miss"] },
      }),
      null,
    );
    expect(await drive(exp.id)).toEqual({ state: "succeeded", error: null });
    const rows = await listPreferencePairs(t.db, { experimentId: exp.id });
    expect(rows.every((r) => part.get(r.taskKey) === "train")).toBe(true);
    const by = (src: string) => rows.filter((r) => r.pairSource === src);
    // near-miss: the buggy file and both killed mutants (hidden first) against the reference answer
    expect(by("near_miss")).toHaveLength(3 * train.length);
    expect(by("cross_state")).toHaveLength(0);
    const first = train[0] ?? "";
    const task = tasks.get(first);
    const near = by("near_miss").filter((r) => r.taskKey === first);
    expect(near.map((r) => [r.rejectedSource, r.rejectedVerdict]).sort()).toEqual([
      ["buggy", "fail_hidden"],
      ["mutant", "fail_hidden"],
      ["mutant", "fail_public"],
    ]);
    expect(near.every((r) => r.chosenText === formatAnswer(task?.reference ?? []))).toBe(true);
    expect(near.find((r) => r.rejectedSource === "buggy")?.rejectedText).toBe(
      formatAnswer(task?.files.filter((f) => f.role === "main") ?? []),
    );
    // on-policy: the passing second sample against the failing first, both the start policy's
    const onp = by("on_policy");
    expect(onp.map((r) => r.taskKey).sort()).toEqual(train);
    expect(onp.every((r) => r.chosenSource === "on_policy" && r.rejectedSample === 0)).toBe(true);
    const stages = new Map((await listStages(t.db, exp.id)).map((r) => [r.key, r]));
    const pairs = parseStageOutput("pairs", "pairs:r1", stages.get("pairs:r1")?.output);
    expect(pairs?.stats?.byPairSource).toEqual({ near_miss: 3 * train.length, on_policy: train.length });
    // the pair browser filters by source
    const page = await browsePreferencePairs(t.db, {
      experimentId: exp.id,
      pairSource: "on_policy",
      limit: 200,
      offset: 0,
    });
    expect(page.total).toBe(train.length);
    expect(page.rows.every((r) => r.pairSource === "on_policy")).toBe(true);

    // Each DPO run's epochs scored on held-out pairs of the dev tasks with audits (never stored, never trained on).
    const dev = idsOf("dev").slice(0, 2);
    const mine = [...scoreCalls];
    expect(mine.length).toBeGreaterThan(0);
    for (const sc of mine) {
      expect([...new Set(sc.pairIds.map((id) => id.split(":")[0]))].sort()).toEqual(dev);
      expect(sc.payload.policies.map((p) => p.name)).toEqual(["epoch-1", "epoch-2"]);
    }
    const dpoOut = parseStageOutput("dpo", "dpo:s1:r1", stages.get("dpo:s1:r1")?.output);
    expect(dpoOut?.heldOut).toMatchObject({ pairs: 3 * dev.length, tasks: dev.length });
    expect(dpoOut?.heldOut?.epochs?.map((e) => [e.epoch, e.chosenLogpDelta, e.warning !== null])).toEqual([
      [1, 0.5, false],
      [2, -2, true],
    ]);
    // The reference of the held-out score is the run's start, here an SFT adapter.
    const start = calls.find((c) => !c.payload.spec.score_only)?.payload.startAdapterSha256;
    expect(start).toMatch(/^[0-9a-f]{64}$/);
    expect(mine.every((sc) => sc.payload.referenceAdapterSha256 === start)).toBe(true);
  });

  it("near-miss pairs alone sample nothing on train and still build every train task's pairs", async () => {
    const train = idsOf("train");
    const datasetId = await referenceDataset(t.db, train);
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, {
        name: "near-miss only",
        datasetId,
        method: "sft+dpo",
        dpo: { rounds: 1, samples: 2, epochs: 1, pairSources: ["near_miss"] },
      }),
      null,
    );
    expect(await drive(exp.id)).toEqual({ state: "succeeded", error: null });
    const sampled = await t.db
      .select({ id: schema.evaluations.id })
      .from(schema.evaluations)
      .where(and(eq(schema.evaluations.experimentId, exp.id), eq(schema.evaluations.split, "train")));
    expect(sampled).toHaveLength(0);
    const rows = await listPreferencePairs(t.db, { experimentId: exp.id });
    expect(rows).toHaveLength(3 * train.length);
    expect(new Set(rows.map((r) => r.pairSource))).toEqual(new Set(["near_miss"]));
  });

  it("the RFT control trains the SFT term alone on the pairs' chosen answers, with DPO's steps", async () => {
    const train = idsOf("train");
    const datasetId = await referenceDataset(t.db, train);
    const dpoBlock = { rounds: 1, samples: 2, epochs: 2, batchSize: 3 };
    const exp = await createExperiment(
      t.db,
      baseConfig(splitId, { name: "rft", datasetId, method: "sft+rft", dpo: dpoBlock }),
      null,
    );
    const before = calls.length;
    expect(await drive(exp.id)).toEqual({ state: "succeeded", error: null });
    const runs = calls.slice(before).filter((c) => !c.payload.spec.score_only);
    expect(runs.length).toBeGreaterThan(0);
    const stored = await listPreferencePairs(t.db, { experimentId: exp.id });
    const config = ExperimentConfig.parse(
      (await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, exp.id)))[0]?.config,
    );
    const dpo = dpoRecipeOf(config);
    if (!dpo) throw new Error("no dpo block");
    for (const r of runs) {
      expect(r.payload.spec).toMatchObject({ objective: "rft", epochs: 2, batch_size: 3 });
      // the chosen answers it trains on are the stored pairs' chosen answers
      const chunks: Buffer[] = [];
      for await (const c of await s.artifacts.read(r.payload.pairsHash)) chunks.push(Buffer.from(c));
      const lines = Buffer.concat(chunks)
        .toString("utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => DpoPairLine.parse(JSON.parse(l)));
      expect(lines.map((l) => l.chosen).sort()).toEqual(stored.map((p) => p.chosenText).sort());
      // the same job under sft+dpo differs only by the objective: same pairs, epochs, batches, rate → same steps
      const opts = { seed: r.payload.spec.seed ?? 0, pairsHash: r.payload.pairsHash, start: null, scoreOnly: false };
      const twin = dpoJobPayload({ ...config, method: "sft+dpo" }, dpo, opts);
      const { objective, ...rest } = r.payload.spec;
      const { objective: twinObjective, ...twinRest } = DpoJobPayload.parse(twin).spec;
      expect([objective, twinObjective]).toEqual(["rft", "dpo"]);
      expect(rest).toEqual(twinRest);
    }
  });
});
