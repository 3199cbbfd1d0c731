import { describe, expect, it } from "vitest";
import { epochMarks } from "../experiments/training";
import { dpoPoints } from "./dpo-progress";

const ev = (step: number, over: Record<string, unknown> = {}) => ({
  data: {
    event: "progress",
    step,
    total_steps: 4,
    epoch: step <= 2 ? 1 : 2,
    epoch_progress: step <= 2 ? step / 2 : (step - 2) / 2,
    loss: 0.7 - step * 0.05,
    lr: 5e-5,
    tokens_per_s: 100,
    eta_s: 4 - step,
    memory_mb: 10,
    dpo_loss: 0.69 - step * 0.05,
    sft_loss: 0.1,
    reward_margin: step * 0.02,
    preference_accuracy: step / 4,
    chosen_reward: step * 0.01,
    rejected_reward: -step * 0.01,
    ...over,
  },
});

describe("dpoPoints", () => {
  it("reads each step's DPO figures in step order, the last report of a repeated step winning", () => {
    const pts = dpoPoints([ev(3), ev(1), ev(2), ev(2, { reward_margin: 0.5 }), ev(4)]);
    expect(pts.map((p) => p.step)).toEqual([1, 2, 3, 4]);
    expect(pts[1]).toMatchObject({ step: 2, epoch: 1, rewardMargin: 0.5, preferenceAccuracy: 0.5, sftLoss: 0.1 });
    expect(pts[3]).toMatchObject({ dpoLoss: 0.69 - 0.2, chosenReward: 0.04, rejectedReward: -0.04, totalSteps: 4 });
    // the training panel's epoch marks work on them unchanged
    expect(epochMarks(pts)).toEqual([{ epoch: 2, step: 3 }]);
  });

  it("skips train events (no reward figures) and rows that are not progress events", () => {
    const train = ev(1);
    const { reward_margin: _m, preference_accuracy: _a, ...plain } = train.data;
    expect(dpoPoints([{ data: plain }, { data: { event: "log", line: "x" } }, { data: null }])).toEqual([]);
    // positive control: the same row with its figures is read
    expect(dpoPoints([train])).toHaveLength(1);
  });
});
