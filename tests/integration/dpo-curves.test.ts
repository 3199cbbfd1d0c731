import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimJob, enqueueJob, recordProgress, updateStage } from "@agentlab/db";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { callerAs, type Caller } from "./helpers/callers";
import { baseConfig, makeAgent, makeServices, makeSplit, startExperiment } from "./experiments-harness";

// The experiment page's DPO panel: a dpo job's progress events, stored as job progress by
// the real fenced write path, read back per seed and round (loss, reward margin, preference
// accuracy, epoch marks, ETA); a train stage's events stay on the training panel. The rounds
// summary reads each pairs stage's recorded output.

let t: TestDb;
let s: Services;
let viewer: Caller;

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  viewer = await callerAs(s, "viewer");
});
afterAll(async () => t?.drop());

const event = (step: number, epoch: number, margin?: number) => ({
  event: "progress",
  step,
  total_steps: 6,
  epoch,
  epoch_progress: ((step - 1) % 3) / 3 + 1 / 3,
  loss: 0.7 - step * 0.05,
  lr: 5e-5,
  tokens_per_s: 300,
  eta_s: (6 - step) * 2,
  memory_mb: 100,
  ...(margin === undefined
    ? {}
    : {
        dpo_loss: 0.69 - step * 0.05,
        sft_loss: 0,
        reward_margin: margin,
        preference_accuracy: Math.min(1, step / 4),
        chosen_reward: margin / 2,
        rejected_reward: -margin / 2,
      }),
});

describe("dpo.curves and dpo.rounds", () => {
  it("reads each seed's DPO steps of each round, and leaves train events to the training panel", async () => {
    const { splitId } = await makeSplit(t.db);
    const id = await startExperiment(
      s,
      baseConfig(splitId, { method: "sft+dpo", dpo: { rounds: 2, epochs: 2 }, seeds: [1, 2] }),
    );
    const fit = await makeAgent(t.db, { shellJobs: true }); // shell jobs stand in for the train and dpo jobs
    // Stand-ins for the dpo and train jobs: the panels read a stage's job and its attempt, whatever it runs.
    const dpoJob = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    await updateStage(t.db, id, "dpo:s1:r1", { state: "running", jobIds: [dpoJob.id] });
    const c1 = await claimJob(t.db, { ...fit, shellJobs: true });
    const trainJob = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    await updateStage(t.db, id, "train:s1", { state: "running", jobIds: [trainJob.id] });
    const c2 = await claimJob(t.db, { ...fit, shellJobs: true });
    if (!c1 || !c2) throw new Error("not claimed");
    const steps: [number, number, number][] = [
      [1, 1, 0.01],
      [2, 1, 0.05],
      [3, 1, 0.12],
      [4, 2, 0.2],
    ];
    for (const [seq, [step, epoch, margin]] of steps.entries())
      expect(await recordProgress(t.db, fit.agentId, dpoJob.id, c1.attemptId, seq, event(step, epoch, margin))).toBe(
        true,
      );
    // a repeated delivery of step 2 with other figures: the last report of a step wins
    expect(await recordProgress(t.db, fit.agentId, dpoJob.id, c1.attemptId, 9, event(2, 1, 0.07))).toBe(true);
    expect(await recordProgress(t.db, fit.agentId, trainJob.id, c2.attemptId, 0, event(1, 1))).toBe(true);

    const runs = await viewer.dpo.curves({ id });
    expect(runs.map((r) => [r.key, r.seed, r.round])).toEqual([
      ["dpo:s1:r1", 1, 1],
      ["dpo:s1:r2", 1, 2],
      ["dpo:s2:r1", 2, 1],
      ["dpo:s2:r2", 2, 2],
    ]);
    const [r1] = runs;
    expect(r1?.points.map((p) => p.rewardMargin)).toEqual([0.01, 0.07, 0.12, 0.2]);
    expect(r1?.points.map((p) => p.preferenceAccuracy)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(r1).toMatchObject({ jobState: "running", marks: [{ epoch: 2, step: 4 }], etaS: 4 });
    expect(r1?.fraction).toBeCloseTo(4 / 6, 12);
    expect(runs.slice(1).every((r) => r.points.length === 0 && r.fraction === null)).toBe(true);
    // the train stage's event is on the training panel (positive control) and on no DPO curve
    const train = await viewer.runs.training({ id });
    expect(train.find((x) => x.key === "train:s1")?.points).toHaveLength(1);

    await updateStage(t.db, id, "dpo:s1:r1", { state: "succeeded" });
    expect((await viewer.dpo.curves({ id }))[0]).toMatchObject({ fraction: 1 });
  });

  it("summarizes each round's pairs stage from its recorded output", async () => {
    const { splitId } = await makeSplit(t.db);
    const id = await startExperiment(s, baseConfig(splitId, { method: "sft+dpo", dpo: { rounds: 2 }, seeds: [1] }));
    const stats = {
      kept: 9,
      dropped: 3,
      downweighted: 0,
      byFailingLayer: { hidden: 6, syntax: 3 },
      byChosenSource: { reference: 9 },
      byRejectedSource: { on_policy: 9 },
      tasks: 5,
      marginKept: { n: 9, min: -3, median: -1, mean: -1.2, max: 0 },
      marginDropped: { n: 3, min: 0.2, median: 0.5, mean: 0.6, max: 1.1 },
    };
    await updateStage(t.db, id, "pairs:r1", {
      state: "succeeded",
      output: {
        round: 1,
        policy: { model: "adapter", seed: 1, seedIndex: 0, epoch: 2 },
        built: 12,
        skipped: { duplicate: 2 },
        stored: 9,
        stats,
      },
    });
    const rounds = await viewer.dpo.rounds({ id });
    expect(rounds).toHaveLength(2);
    expect(rounds[0]).toMatchObject({
      round: 1,
      state: "succeeded",
      built: 12,
      stored: 9,
      stats,
      skipped: { duplicate: 2 },
    });
    expect(rounds[0]?.policy).toMatch(/seed 1/);
    expect(rounds[1]).toMatchObject({ round: 2, state: "pending", stats: null, policy: null });
  });

  it("an sft experiment has no DPO runs or rounds", async () => {
    const { splitId } = await makeSplit(t.db);
    const id = await startExperiment(s, baseConfig(splitId, { seeds: [1] }));
    expect(await viewer.dpo.curves({ id })).toEqual([]);
    expect(await viewer.dpo.rounds({ id })).toEqual([]);
    await expect(viewer.dpo.curves({ id: "00000000-0000-4000-8000-0000000000ff" })).rejects.toThrow(/not found/);
  });
});
