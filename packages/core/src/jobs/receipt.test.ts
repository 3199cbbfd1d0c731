import { describe, expect, it } from "vitest";
import { checkJobProgress } from "./contracts";
import { receiveJobEnd } from "./receipt";

const step = {
  event: "progress",
  step: 1,
  total_steps: 2,
  epoch: 1,
  epoch_progress: 0.5,
  loss: 1.2,
  lr: 1e-4,
  tokens_per_s: 10,
  eta_s: 3,
  memory_mb: 100,
};
const dpo = {
  dpo_loss: 0.6,
  sft_loss: 0.1,
  reward_margin: 0.02,
  preference_accuracy: 0.5,
  chosen_reward: 0.01,
  rejected_reward: -0.01,
};

describe("receiveJobEnd", () => {
  it("turns a success whose result breaks the contract into an infra_error naming the type and the field", () => {
    const got = receiveJobEnd("shell", { reason: "succeeded", result: { from: "spool" }, error: null });
    expect(got.reason).toBe("infra_error");
    expect(got.result).toEqual({});
    expect(got.refused).toMatch(/^refused at receipt: the agent's shell result does not match its contract/);
    expect(got.refused).toMatch(/outputTruncated/);
    expect(got.error).toBe(got.refused);
  });

  it("positive control: the same success, well-formed, is taken as parsed", () => {
    expect(receiveJobEnd("shell", { reason: "succeeded", result: { outputTruncated: true }, error: null })).toEqual({
      reason: "succeeded",
      result: { outputTruncated: true },
      error: null,
      refused: null,
    });
  });

  it("keeps a failure's result as its evidence, whatever its shape", () => {
    const end = { reason: "user_error" as const, result: { reference: "failed" }, error: "reference failed" };
    expect(receiveJobEnd("grade", end)).toEqual({ ...end, refused: null });
  });
});

describe("checkJobProgress", () => {
  it("reads each type's own variant: train steps, dpo steps with their figures, items", () => {
    expect(checkJobProgress("train", step)).toMatchObject({ ok: true });
    expect(checkJobProgress("dpo", { ...step, ...dpo })).toMatchObject({ ok: true });
    expect(checkJobProgress("generate", { event: "items", done: 1, total: 2 })).toMatchObject({ ok: true });
    const batch = { event: "items", done: 2, total: 2, verdicts: { pass: 1, fail: 1 } };
    expect(checkJobProgress("grade-batch", batch)).toEqual({ ok: true, progress: batch });
  });

  it("refuses a mismatch with the type and the field named", () => {
    const noFigures = checkJobProgress("dpo", step);
    expect(noFigures.ok).toBe(false);
    expect(!noFigures.ok && noFigures.error).toMatch(/^dpo progress does not match its contract[\s\S]*reward_margin/);
    const untagged = checkJobProgress("generate", { done: 1, total: 2 });
    expect(!untagged.ok && untagged.error).toMatch(/event/);
    const over = checkJobProgress("generate", { event: "items", done: 3, total: 2 });
    expect(!over.ok && over.error).toMatch(/done exceeds total[\s\S]*done/);
    const extra = checkJobProgress("train", { ...step, rank: 1 });
    expect(!extra.ok && extra.error).toMatch(/rank/);
    expect(checkJobProgress("shell", { event: "items", done: 0, total: 1 }).ok).toBe(false);
  });
});
