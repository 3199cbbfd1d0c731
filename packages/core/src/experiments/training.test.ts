import { describe, expect, it } from "vitest";
import {
  dpoEpochDynamics,
  dpoPoints,
  grpoPoints,
  epochLosses,
  epochMarks,
  ratchet,
  restartMarks,
  smooth,
  thin,
  trainFraction,
  trainPoints,
} from "./training";

const ev = (step: number, epoch: number, loss: number) => ({
  data: {
    event: "progress",
    step,
    total_steps: 6,
    epoch,
    epoch_progress: 0.5,
    loss,
    lr: 1e-4,
    tokens_per_s: 900,
    eta_s: 10,
    memory_mb: 100,
  },
});

describe("training curves", () => {
  it("a later attempt replaces the steps from its first one on and is marked where it took over", () => {
    const at = (attempt: number, step: number, loss: number) => ({ ...ev(step, 1, loss), attempt });
    // resumed after step 2: the lost attempt's steps 1-2 stay, its step 3 is replaced
    const resumed = [at(1, 1, 9), at(1, 2, 8), at(1, 3, 7), at(2, 3, 6), at(2, 4, 5)];
    expect(trainPoints(resumed).map((p) => [p.step, p.loss])).toEqual([
      [1, 9],
      [2, 8],
      [3, 6],
      [4, 5],
    ]);
    expect(restartMarks(resumed)).toEqual([{ attempt: 2, step: 3, resumed: true }]);
    // restarted from step 0: nothing of the lost attempt is left on the curve
    const scratch = [at(1, 1, 9), at(1, 2, 8), at(1, 3, 7), at(2, 1, 9.5), at(2, 2, 8.5)];
    expect(trainPoints(scratch).map((p) => p.loss)).toEqual([9.5, 8.5]);
    expect(restartMarks(scratch)).toEqual([{ attempt: 2, step: 1, resumed: false }]);
    expect(restartMarks([at(1, 1, 9), at(1, 2, 8)])).toEqual([]);
  });

  it("reads trainer progress events, skips other progress and keeps the last report of a step", () => {
    const pts = trainPoints([
      ev(2, 1, 1.5),
      { data: { done: 3, total: 9 } },
      ev(1, 1, 2),
      ev(2, 1, 1.4),
      ev(3, 2, 1.1),
    ]);
    expect(pts.map((p) => [p.step, p.loss])).toEqual([
      [1, 2],
      [2, 1.4],
      [3, 1.1],
    ]);
    expect(epochMarks(pts)).toEqual([{ epoch: 2, step: 3 }]);
    expect(trainFraction(pts)).toBeCloseTo(0.5, 12);
    expect(trainFraction([])).toBeNull();
  });

  it("smooths with bias correction: weight 0 is the raw series, a constant stays constant", () => {
    expect(smooth([3, 1, 2], 0)).toEqual([3, 1, 2]);
    smooth([2, 2, 2, 2], 0.9).forEach((v) => expect(v).toBeCloseTo(2, 12));
    const s = smooth([4, 0, 4, 0], 0.6);
    expect(s[0]).toBeCloseTo(4, 12);
    expect(Math.max(...s.slice(1)) - Math.min(...s.slice(1))).toBeLessThan(4);
  });

  it("thins long runs but keeps the ends and every epoch boundary", () => {
    const pts = trainPoints(Array.from({ length: 1000 }, (_, i) => ev(i + 1, i < 333 ? 1 : i < 666 ? 2 : 3, 1)));
    const t = thin(pts, 100);
    expect(t.length).toBeLessThanOrEqual(110);
    expect(t[0]?.step).toBe(1);
    expect(t.at(-1)?.step).toBe(1000);
    expect(epochMarks(t)).toEqual(epochMarks(pts));
  });

  it("never lets a running stage's progress run backwards, but restarts with the stage", () => {
    let r = ratchet(undefined, "running", 1);
    r = ratchet(r, "running", 1 / 41);
    expect(r.value).toBe(1);
    r = ratchet(r, "failed", 0.5);
    expect(r.value).toBe(0.5);
    r = ratchet(r, "running", 0.1);
    expect(r.value).toBe(0.1);
    expect(ratchet(r, "succeeded", 0).value).toBe(1);
  });
});

describe("epoch losses", () => {
  const pts = trainPoints([ev(1, 1, 2), ev(2, 1, 1.5), ev(3, 2, 1.2), ev(4, 2, 1)]);
  it("come from the uploaded adapters while running, from the run record once finished", () => {
    expect(
      epochLosses(
        [
          { meta: { epoch: 2, trainLoss: 1.1, evalLoss: null } },
          { meta: { epoch: 1, trainLoss: 1.7, evalLoss: 1.9 } },
          { meta: { junk: true } },
        ],
        null,
        pts,
      ),
    ).toEqual([
      { epoch: 1, step: 2, trainLoss: 1.7, evalLoss: 1.9 },
      { epoch: 2, step: 4, trainLoss: 1.1, evalLoss: null },
    ]);
    expect(epochLosses([], { snapshots: [{ epoch: 1, step: 2, train_loss: 1.6, eval_loss: 1.8 }] }, pts)).toEqual([
      { epoch: 1, step: 2, trainLoss: 1.6, evalLoss: 1.8 },
    ]);
  });
});

const dpoEv = (step: number, over: Record<string, unknown> = {}) => ({
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
    const pts = dpoPoints([dpoEv(3), dpoEv(1), dpoEv(2), dpoEv(2, { reward_margin: 0.5 }), dpoEv(4)]);
    expect(pts.map((p) => p.step)).toEqual([1, 2, 3, 4]);
    expect(pts[1]).toMatchObject({ step: 2, epoch: 1, rewardMargin: 0.5, preferenceAccuracy: 0.5, sftLoss: 0.1 });
    expect(pts[3]).toMatchObject({ dpoLoss: 0.69 - 0.2, chosenReward: 0.04, rejectedReward: -0.04, totalSteps: 4 });
    // the training panel's epoch marks work on them unchanged
    expect(epochMarks(pts)).toEqual([{ epoch: 2, step: 3 }]);
  });

  it("skips train events (no reward figures) and rows that are not progress events", () => {
    const train = dpoEv(1);
    const { reward_margin: _m, preference_accuracy: _a, ...plain } = train.data;
    expect(dpoPoints([{ data: plain }, { data: { event: "log", line: "x" } }, { data: null }])).toEqual([]);
    // positive control: the same row with its figures is read
    expect(dpoPoints([train])).toHaveLength(1);
  });

  it("reads the epoch-end Δ log-probs and the displacement warning; other steps carry none", () => {
    const warning = "the chosen answers' log-prob fell";
    const pts = dpoPoints([
      dpoEv(1),
      dpoEv(2, { chosen_logp_delta: 0.5, rejected_logp_delta: -1 }),
      dpoEv(3),
      dpoEv(4, { chosen_logp_delta: -2, rejected_logp_delta: -5, logp_warning: warning }),
    ]);
    expect(pts[0]?.chosenLogpDelta).toBeUndefined();
    expect(dpoEpochDynamics(pts)).toEqual([
      { epoch: 1, step: 2, chosen: 0.5, rejected: -1, warning: null },
      { epoch: 2, step: 4, chosen: -2, rejected: -5, warning },
    ]);
  });
});

const grpoEv = (step: number, attempt: number, over: Record<string, unknown> = {}) => ({
  attempt,
  data: {
    event: "grpo_step",
    step,
    total_steps: 3,
    loss: 0.1,
    lr: 1e-6,
    reward_mean: 0.25 * step,
    reward_std: 0.4,
    zero_variance_share: 0.5,
    completion_length_mean: 40,
    truncated_share: 0,
    entropy: null,
    kl: null,
    completions: 8,
    masked_groups: 0,
    pass_count: 2 * step,
    grades_per_s: 3,
    audit: { tampered: 1, timeout: 0, resource_limit: 0, unparseable: 2, infra_error: 0, flags: [] },
    eta_s: 5,
    memory_mb: 100,
    ...over,
  },
});

describe("grpoPoints", () => {
  it("reads each grpo step in order; a later attempt replaces the steps from its first one on", () => {
    const pts = grpoPoints([grpoEv(1, 1), grpoEv(2, 1), grpoEv(3, 1), grpoEv(2, 2, { reward_mean: 0.9 }), ev(1, 1, 2)]);
    expect(pts.map((p) => [p.step, p.rewardMean])).toEqual([
      [1, 0.25],
      [2, 0.9],
    ]);
    expect(pts[0]).toMatchObject({ passShare: 2 / 8, suspicious: 3, zeroVarianceShare: 0.5, kl: null });
    expect(trainFraction(pts)).toBeCloseTo(2 / 3);
  });

  it("skips train steps and malformed rows (control: the same step well-formed is read)", () => {
    const broken = grpoEv(1, 1, { audit: { tampered: 1 } });
    expect(grpoPoints([ev(1, 1, 2), broken, { data: null }])).toEqual([]);
    expect(grpoPoints([grpoEv(1, 1)])).toHaveLength(1);
  });
});
