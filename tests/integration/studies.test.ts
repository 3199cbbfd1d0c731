import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import {
  getSelection,
  getStudy,
  insertDataset,
  listStudyArms,
  queryRows,
  recordStudyTestClaim,
  schema,
  setDatasetTokenCounts,
  splitTestReads,
} from "@agentlab/db";
import { holmAdjust, sha256Hex, type StudyDefinitionInput, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner, type ExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createStudy, planStudy } from "../../apps/web/server/studies/service";
import { studyReport } from "../../apps/web/server/studies/report";
import { studyView } from "../../apps/web/server/studies/view";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { agentStep, makeAgent, makeServices, makeSplit, markDataReady, type Behaviour } from "./experiments-harness";

// A study end to end on the real Postgres with the harness's simulated agent: arms stop after dev
// selection, ONE test claim covers them all, the report's contrasts are Holm-adjusted; the
// refusals (a second claim, arms with unequal supervised tokens, an arm changing two fields) with
// their positive controls.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
let runner: ExperimentRunner;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  runner = createExperimentRunner(s, { autoStart: false });
});
afterAll(async () => {
  await runner?.stop();
  await t?.drop();
});

const DATASET = "00000000-0000-4000-8000-00000000000b";
const definition = (over: Partial<StudyDefinitionInput> = {}): StudyDefinitionInput => ({
  name: "lr and rank",
  splitId,
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "sim-grader/1" },
  seeds: [1, 2, 3],
  reference: {
    name: "reference",
    recipe: {
      teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
      datasetId: DATASET,
      training: { epochs: 2 },
      bootstrap: { iterations: 500, seed: 3 },
    },
  },
  arms: [
    { name: "high-lr", factor: "training.learningRate", recipe: { training: { learningRate: 1e-3 } } },
    { name: "rank-64", factor: "training.lora.r", recipe: { training: { lora: { r: 64 } } } },
  ],
  contrasts: [{ arms: ["high-lr", "reference"] }, { arms: ["rank-64", "reference"] }],
  aa: { seeds: [4, 5, 6] },
  ...over,
});

// Which arm's jobs the simulated agent is answering: arms are driven one at a time, so every queued
// job is the current arm's. The adapters' names are `s<seed>e<epoch>` whatever the arm.
let current = "";
const taskIndex = (task: TaskSpec) => [...tasks.keys()].indexOf(task.id);
const behaviour: Behaviour = {
  fixes(model, task) {
    if (!model.endsWith("e2")) return false;
    const i = taskIndex(task);
    if (current === "high-lr") return i % 3 !== 2;
    if (current === "rank-64") return i % 3 === 0 || i % 7 === 1;
    return i % 3 === 0;
  },
};

async function startArms(experimentIds: string[]) {
  for (const id of experimentIds) await markDataReady(s.db, id);
}

async function stagesOf(id: string) {
  const rows = await t.db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id));
  return new Map(rows.map((r) => [r.key, r.state]));
}

/** Advances one arm and answers its jobs until its test stage is reached (or the arm ends). */
async function driveArm(name: string, id: string, until: (st: Map<string, string>) => boolean) {
  current = name;
  for (let round = 0; round < 40; round++) {
    await runner.advance(id);
    while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    if (until(await stagesOf(id))) return;
  }
  throw new Error(`arm ${name} did not get there in 40 rounds`);
}

const claimsOf = async () => (await splitTestReads(t.db, splitId)).claims;
const testRunOf = async (id: string) =>
  (await t.db.select().from(schema.testRuns).where(eq(schema.testRuns.experimentId, id)))[0];

describe("a study", () => {
  let studyId = "";
  let arms: Awaited<ReturnType<typeof listStudyArms>> = [];

  it("creates one experiment per arm with the shared split, base, protocol and seeds", async () => {
    const { study, experimentIds } = await createStudy(s.db, definition(), null);
    studyId = study.id;
    arms = await listStudyArms(s.db, studyId);
    expect(arms.map((a) => [a.name, a.role])).toEqual([
      ["reference", "reference"],
      ["high-lr", "arm"],
      ["rank-64", "arm"],
      ["A/A", "aa"],
    ]);
    const configs = await Promise.all(
      experimentIds.map(
        async (id) => (await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, id)))[0]?.config,
      ),
    );
    expect(new Set(configs.map((c) => JSON.stringify([c?.splitId, c?.baseModel, c?.evaluation]))).size).toBe(1);
    expect(configs.map((c) => c?.seeds)).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(configs.map((c) => c?.training.learningRate)).toEqual([2e-4, 1e-3, 2e-4, 2e-4]);
    await startArms(experimentIds);
  });

  it("an arm past its dev selection waits at test_eval and claims nothing on its own", async () => {
    const ref = arms[0];
    if (!ref) throw new Error("no reference arm");
    await driveArm(
      "reference",
      ref.experimentId,
      (st) => st.get("select") === "succeeded" && st.get("test_eval") === "running",
    );
    // Further passes change nothing: no ledger entry, no test run, no test answer.
    await runner.advance(ref.experimentId);
    await runner.advance(ref.experimentId);
    expect(await claimsOf()).toEqual([]);
    expect(await testRunOf(ref.experimentId)).toBeUndefined();
    const [gens] = await queryRows<{ n: number }>(
      t.db,
      sql`select count(*)::int as n from experiment_generations where experiment_id = ${ref.experimentId} and split = 'test'`,
    );
    expect(gens?.n).toBe(0);
    expect((await getStudy(s.db, studyId))?.testClaimId).toBeNull();
    // The study page's per-arm curves: the selected arm's dev pass@1 per epoch, from its selection
    // table; the arms not yet selected have none.
    const selection = await getSelection(s.db, ref.experimentId);
    if (!selection) throw new Error("no selection");
    const view = await studyView(s.db, studyId);
    const curve = view.arms.find((a) => a.name === "reference")?.devCurve;
    expect(curve?.base).toBe(selection.table.find((r) => r.ref.model === "base")?.pass1);
    expect(curve?.points).toEqual(
      selection.table.flatMap((r) =>
        r.ref.model === "adapter" ? [{ seed: r.ref.seed, epoch: r.ref.epoch, pass1: r.pass1 }] : [],
      ),
    );
    expect(curve?.points.length).toBeGreaterThan(0);
    expect(view.arms.filter((a) => a.name !== "reference").map((a) => a.devCurve)).toEqual(
      arms.slice(1).map(() => null),
    );
  });

  it("after a restart, once every arm's selection is frozen, ONE claim covers all arms and their test evaluation runs under it", async () => {
    // A server restart between the wait and the claim: a new runner finds everything in the database.
    await runner.stop();
    runner = createExperimentRunner(s, { autoStart: false });
    for (const a of arms.slice(1))
      await driveArm(
        a.name,
        a.experimentId,
        (st) => st.get("select") === "succeeded" && st.get("test_eval") !== "pending",
      );
    for (const a of arms) await driveArm(a.name, a.experimentId, (st) => st.get("report") === "succeeded");
    const claims = await claimsOf();
    expect(claims).toHaveLength(1);
    expect(claims[0]?.studyId).toBe(studyId);
    expect(claims[0]?.experimentId).toBeNull();
    for (const a of arms) expect(claims[0]?.models.some((m) => m.startsWith(`${a.name}: seed`))).toBe(true);
    const stored = await listStudyArms(s.db, studyId);
    for (const a of stored) {
      const run = await testRunOf(a.experimentId);
      expect(run?.models).toEqual(a.testModels);
    }
    // The pass after the report marks each arm's experiment succeeded.
    for (const a of arms) await runner.advance(a.experimentId);
    const states = await t.db.select({ state: schema.experiments.state }).from(schema.experiments);
    expect(states.map((r) => r.state)).toEqual(arms.map(() => "succeeded"));
  });

  it("refuses a second test claim for the study (the first one stands), in the query and in the database", async () => {
    await expect(
      s.db.transaction((tx) => recordStudyTestClaim(tx, { studyId, recipeHash: "x", arms: [] })),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("already claimed") });
    const other = (await claimsOf())[0];
    if (!other) throw new Error("no claim");
    const [ledgerRow] = await t.db.select({ id: schema.splitTestClaims.id }).from(schema.splitTestClaims);
    // Bypassing the query: the trigger keeps the claim written once (clearing it is refused too).
    const err = await t.db
      .update(schema.studies)
      .set({ testClaimId: null })
      .where(eq(schema.studies.id, studyId))
      .then(
        () => "no error",
        (e: { cause?: { message?: string } }) => String(e.cause?.message),
      );
    expect(err).toMatch(/already claimed its test set/);
    expect((await getStudy(s.db, studyId))?.testClaimId).toBe(ledgerRow?.id);
    expect(await claimsOf()).toHaveLength(1);
  });

  it("reports the arms × metrics matrix and Holm-adjusted contrasts (adjusted ≥ unadjusted p), A/A apart", async () => {
    const study = await getStudy(s.db, studyId);
    if (!study) throw new Error("no study");
    const r = await studyReport(s.db, study);
    if (!r) throw new Error("no report");
    expect(r.arms.map((a) => a.name)).toEqual(["reference", "high-lr", "rank-64", "A/A"]);
    expect(r.contrasts.map((c) => c.arms)).toEqual([
      ["high-lr", "reference"],
      ["rank-64", "reference"],
    ]);
    expect(r.contrasts.map((c) => c.p_holm)).toEqual(holmAdjust(r.contrasts.map((c) => c.p)));
    for (const c of r.contrasts) {
      expect(c.p_holm).toBeGreaterThanOrEqual(c.p);
      expect(c.scope).toBe("recipe");
      expect(c.interval[0]).toBeLessThanOrEqual(c.delta);
    }
    const [hi] = r.contrasts;
    expect(hi?.delta).toBeGreaterThan(0);
    // The A/A arm learned what the reference learned: its contrast is exactly null.
    expect(r.aa?.delta).toBe(0);
    expect(r.testClaim.readsOfSplit).toBe(1);
    // The simulated trainer's snapshot of epoch e is at step e; every arm selected epoch 2.
    for (const a of r.arms) expect(a.steps).toEqual([2, 2, 2]);
    expect((await getStudy(s.db, studyId))?.state).toBe("succeeded");
    // Stored once: a second read returns the same body.
    const again = await studyReport(s.db, (await getStudy(s.db, studyId)) ?? study);
    expect(again?.generatedAt).toBe(r.generatedAt);
  });
});

describe("study creation refusals", () => {
  async function dataset(tokens: number) {
    const row = await insertDataset(
      s.db,
      {
        name: `ds ${tokens}`,
        hash: sha256Hex(`ds ${tokens} ${Math.random()}`),
        splitId,
        sourceCollectionIds: [],
        promptHash: sha256Hex("p"),
        sampleCount: 10,
        taskCount: 10,
      },
      [],
    );
    await setDatasetTokenCounts(s.db, row.id, {
      model: "/models/tiny",
      supervisedTokens: tokens,
      totalTokens: tokens * 2,
      maxTokens: 100,
      chatTemplateSha256: sha256Hex("chatml"),
    });
    return row.id;
  }
  const tokenStudy = (ref: string, arm: string) =>
    definition({
      name: "tokens",
      reference: {
        name: "reference",
        recipe: { teacher: { providerId: "00000000-0000-4000-8000-00000000000a" }, datasetId: ref },
      },
      arms: [{ name: "other-data", factor: "datasetId", recipe: { datasetId: arm } }],
      contrasts: [{ arms: ["other-data", "reference"] }],
      aa: undefined,
      tokenMatching: { tolerance: 0.005 },
    });
  const studyCount = async () => (await t.db.select({ id: schema.studies.id }).from(schema.studies)).length;

  it("refuses arms whose supervised tokens differ by more than 0.5%, and accepts 0.3% (positive control)", async () => {
    const before = await studyCount();
    const ref = await dataset(10_000);
    await expect(createStudy(s.db, tokenStudy(ref, await dataset(10_100)), null)).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringMatching(
        /arm "other-data" trains on 10100 supervised tokens, the reference on 10000 \(1\.00% apart/,
      ),
    });
    expect(await studyCount()).toBe(before);
    const ok = await createStudy(s.db, tokenStudy(ref, await dataset(10_030)), null);
    expect(ok.experimentIds).toHaveLength(2);
    // Without token matching the same unequal arms are accepted: the refusal is the matching's.
    const loose = await createStudy(
      s.db,
      { ...tokenStudy(ref, await dataset(10_100)), tokenMatching: undefined },
      null,
    );
    expect(loose.experimentIds).toHaveLength(2);
  });

  it("two claims racing for one study: exactly one lands in the ledger", async () => {
    const { study } = await createStudy(s.db, { ...definition(), name: "race", aa: undefined }, null);
    const before = (await claimsOf()).length;
    const claim = () =>
      s.db.transaction((tx) => recordStudyTestClaim(tx, { studyId: study.id, recipeHash: "h", arms: [] }));
    const results = await Promise.allSettled([claim(), claim()]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const rejected = results.find((r) => r.status === "rejected");
    expect(rejected?.status === "rejected" && rejected.reason).toMatchObject({ code: "CONFLICT" });
    expect((await claimsOf()).length).toBe(before + 1);
  });

  it("refuses an arm that changes a second field, naming it, and writes nothing", async () => {
    const before = await studyCount();
    const bad = definition({
      arms: [
        { name: "high-lr", factor: "training.learningRate", recipe: { training: { learningRate: 1e-3, epochs: 3 } } },
      ],
      contrasts: [{ arms: ["high-lr", "reference"] }],
    });
    await expect(createStudy(s.db, bad, null)).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining(
        'arms.0.recipe.training.epochs: arm "high-lr" differs from the reference in training.epochs',
      ),
    });
    expect(await studyCount()).toBe(before);
  });

  it("plans the power of each primary contrast on the split's test units", async () => {
    const p = await planStudy(s.db, definition());
    expect(p.power.contrasts).toHaveLength(2);
    expect(p.power.units).toBeGreaterThan(0);
    expect(p.work.test.models).toBe(4 * 4);
    expect(p.arms).toHaveLength(4);
  });
});
