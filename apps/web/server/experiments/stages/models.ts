import { DomainError, dpoKey, grpoKey, modelKey, modelLabel, type ModelRef } from "@agentlab/core";
import type { EvalModel } from "../evaluate";
import { recordedOutput, type StageCtx } from "./context";
import { trainOutput } from "./train";

// A model reference → what an evaluation or a dpo job loads: the base, an SFT epoch of one seed
// (its train stage's snapshot), a DPO epoch of one seed and round (its dpo stage's snapshot) or a
// GRPO snapshot of one seed (its grpo stage's).

export function evalModelOf(c: StageCtx, ref: ModelRef): EvalModel {
  if (ref.model === "base") return { key: "base", adapter: null, trainingMethod: null };
  const out =
    ref.model === "adapter"
      ? trainOutput(c, ref.seed)
      : ref.model === "grpo"
        ? recordedOutput(c, grpoKey(ref.seed), "grpo")
        : recordedOutput(c, dpoKey(ref.seed, ref.round), "dpo");
  const s = (out?.snapshots ?? []).find((x) => x.epoch === ref.epoch);
  if (!s) throw new DomainError("PRECONDITION_FAILED", `no adapter snapshot for ${modelLabel(ref)}`);
  return {
    key: modelKey(ref),
    adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null },
    trainingMethod: out?.method ?? null,
  };
}
