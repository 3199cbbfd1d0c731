import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { getStudy, listStudyArms, schema, setExperimentState, splitTestReads, updateStage } from "@agentlab/db";
import { sha256Hex, type StudyDefinitionInput, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner, type ExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createStudy } from "../../apps/web/server/studies/service";
import { studyReport } from "../../apps/web/server/studies/report";
import { studyView } from "../../apps/web/server/studies/view";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { agentStep, makeAgent, makeServices, makeSplit, type Behaviour } from "./experiments-harness";

// A study whose arm fails ends as failed on the real Postgres, naming the arm: before the test
// claim (nothing recorded in the ledger, the waiting arm fails with the study) and after it (the
// claim stays in the ledger as spent, no report from the arms that finished). The arm fails the
// way a real one does: its generate job fails on the simulated agent and the runner ends it.

let t: TestDb;
let s: Services;
let fit: Awaited<ReturnType<typeof makeAgent>>;
let runner: ExperimentRunner;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  fit = await makeAgent(t.db);
  runner = createExperimentRunner(s, { autoStart: false });
});
afterAll(async () => {
  await runner?.stop();
  await t?.drop();
});

const DATASET = "00000000-0000-4000-8000-00000000000b";
const definition = (name: string, splitId: string): StudyDefinitionInput => ({
  name,
  splitId,
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "sim-grader/1" },
  seeds: [1],
  reference: {
    name: "reference",
    recipe: {
      teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
      datasetId: DATASET,
      training: { epochs: 1 },
      bootstrap: { iterations: 200, seed: 3 },
    },
  },
  arms: [{ name: "high-lr", factor: "training.learningRate", recipe: { training: { learningRate: 1e-3 } } }],
  contrasts: [{ arms: ["high-lr", "reference"] }],
});

// Arms are driven one at a time, so every queued job is the current arm's; `failing` names the
// split on which the current arm's generate jobs fail (a trainer crash), if any.
let current = "";
let failing: { arm: string; split: string } | null = null;
let tasks: Map<string, TaskSpec> = new Map();
const behaviour: Behaviour = {
  fixes: (_model, task) => [...tasks.keys()].indexOf(task.id) % 2 === 0,
  generateFails: (_model, split) => failing?.arm === current && failing.split === split,
};

async function newStudy(name: string) {
  const split = await makeSplit(t.db);
  tasks = split.tasks;
  const { study, experimentIds } = await createStudy(s.db, definition(name, split.splitId), null);
  for (const id of experimentIds) {
    await updateStage(s.db, id, "collect", { state: "succeeded" });
    await updateStage(s.db, id, "verify", { state: "succeeded" });
    await updateStage(s.db, id, "dataset", {
      state: "succeeded",
      output: { datasetId: DATASET, datasetHash: sha256Hex("ds"), samples: 1, tasks: 1 },
    });
  }
  const arms = await listStudyArms(s.db, study.id);
  const idOf = (n: string) => arms.find((a) => a.name === n)?.experimentId ?? "";
  return { studyId: study.id, splitId: split.splitId, ref: idOf("reference"), arm: idOf("high-lr") };
}

const experimentOf = async (id: string) =>
  (await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, id)))[0];
const jobState = async (id: string) =>
  (await t.db.select({ state: schema.jobs.state }).from(schema.jobs).where(eq(schema.jobs.id, id)))[0]?.state;
const stagesOf = async (id: string) =>
  new Map(
    (await t.db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id))).map((r) => [
      r.key,
      r.state,
    ]),
  );

/** Advances one arm and answers its jobs until `until` holds (or its experiment ends). */
async function driveArm(name: string, id: string, until: (st: Map<string, string>) => boolean) {
  current = name;
  for (let round = 0; round < 40; round++) {
    await runner.advance(id);
    while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    if (until(await stagesOf(id)) || (await experimentOf(id))?.state !== "running") return;
  }
  throw new Error(`arm ${name} did not get there in 40 rounds`);
}
const waiting = (st: Map<string, string>) => st.get("select") === "succeeded" && st.get("test_eval") === "running";

describe("a study whose arm fails", () => {
  it("before the test claim: ends as failed naming the arm, the waiting arm is canceled with it, the ledger stays empty", async () => {
    const { studyId, splitId, ref, arm } = await newStudy("fails on dev");
    await driveArm("reference", ref, waiting);
    // Positive control: with every arm alive the reference waits and the study runs.
    await runner.advance(ref);
    expect((await experimentOf(ref))?.state).toBe("running");
    expect((await studyView(s.db, studyId)).state).toBe("running");

    failing = { arm: "high-lr", split: "dev" };
    await driveArm("high-lr", arm, () => false);
    failing = null;
    const failed = await experimentOf(arm);
    expect(failed?.state).toBe("failed");

    // The waiting arm's next pass ends the study and cancels the arm: its results serve no report.
    await runner.advance(ref);
    const study = await getStudy(s.db, studyId);
    expect(study?.state).toBe("failed");
    expect(study?.error).toContain(`arm "high-lr" failed (${failed?.error})`);
    expect(study?.error).toContain("the test set was never claimed");
    const refExp = await experimentOf(ref);
    expect(refExp?.state).toBe("canceled");
    expect(refExp?.error).toContain(`study "fails on dev" ended: arm "high-lr" failed`);
    expect((await splitTestReads(t.db, splitId)).claims).toEqual([]);
    const view = await studyView(s.db, studyId);
    expect(view).toMatchObject({ state: "failed", report: null, testClaim: null });
    expect(view.arms.map((a) => [a.name, a.state, a.waitingForStudyClaim])).toEqual([
      ["reference", "canceled", false],
      ["high-lr", "failed", false],
    ]);
  });

  it("stops an arm still training when another fails: canceled naming the study, its running train job with it", async () => {
    const { studyId, arm: other, ref } = await newStudy("fails while training");
    // The reference trains: its train job claimed and left running on the agent.
    current = "reference";
    let train = "";
    for (let round = 0; round < 40 && !train; round++) {
      await runner.advance(ref);
      for (;;) {
        const { claimed } = await agentStep(t.db, fit, tasks, behaviour, { leaveTrainRunning: true });
        if (!claimed) break;
        if (claimed.type === "train") {
          train = claimed.jobId;
          break;
        }
      }
    }
    expect(train).not.toBe("");
    // Positive control: while every arm is alive, a pass leaves the training arm and its job running.
    await runner.advance(ref);
    expect((await experimentOf(ref))?.state).toBe("running");
    expect(await jobState(train)).toBe("running");

    failing = { arm: "high-lr", split: "dev" };
    await driveArm("high-lr", other, () => false);
    failing = null;
    expect((await experimentOf(other))?.state).toBe("failed");

    await runner.advance(ref);
    const refExp = await experimentOf(ref);
    expect(refExp?.state).toBe("canceled");
    expect(refExp?.error).toContain(`study "fails while training" ended: arm "high-lr" failed`);
    expect(["canceling", "canceled"]).toContain(await jobState(train));
    expect((await getStudy(s.db, studyId))?.state).toBe("failed");
  });

  it("after the test claim: ends as failed, the one claim stays in the ledger as spent, no report from the arm that finished", async () => {
    const { studyId, splitId, ref, arm } = await newStudy("fails on test");
    await driveArm("high-lr", arm, waiting);
    // The reference, last to freeze its selection, makes the study's claim and finishes its test
    // evaluation under it; then the arm's test evaluation crashes.
    await driveArm("reference", ref, (st) => st.get("test_eval") === "succeeded");
    expect((await getStudy(s.db, studyId))?.testClaimId).not.toBeNull();
    failing = { arm: "high-lr", split: "test" };
    await driveArm("high-lr", arm, () => false);
    failing = null;
    expect((await experimentOf(arm))?.state).toBe("failed");
    expect((await stagesOf(ref)).get("test_eval")).toBe("succeeded");

    const view = await studyView(s.db, studyId);
    expect(view.state).toBe("failed");
    expect(view.error).toContain(`arm "high-lr" failed`);
    expect(view.error).toContain("its one test claim stays in the split's ledger as spent");
    expect(view.report).toBeNull();
    const claims = (await splitTestReads(t.db, splitId)).claims;
    expect(claims.map((c) => c.studyId)).toEqual([studyId]);
    expect(view.testClaim?.models).toEqual(claims[0]?.models);
    // Later reads build no report either, and nothing is stored.
    const study = await getStudy(s.db, studyId);
    if (!study) throw new Error("no study");
    expect(await studyReport(s.db, study)).toBeNull();
    expect((await getStudy(s.db, studyId))?.report).toBeNull();
  });

  it("after its test evaluation (positive control): an arm canceled then takes nothing from the study, which reports", async () => {
    const { studyId, ref, arm } = await newStudy("cancel after test");
    await driveArm("high-lr", arm, waiting);
    await driveArm("reference", ref, (st) => st.get("test_eval") === "succeeded");
    await driveArm("high-lr", arm, (st) => st.get("test_eval") === "succeeded");
    await setExperimentState(s.db, arm, "canceled", "canceled by a user");
    const view = await studyView(s.db, studyId);
    expect(view.state).toBe("succeeded");
    expect(view.error).toBeNull();
    expect(view.report?.arms.map((a) => a.name)).toEqual(["reference", "high-lr"]);
    expect(view.report?.contrasts.map((c) => c.arms)).toEqual([["high-lr", "reference"]]);
  });
});
