import {
  DomainError,
  bestBy,
  dpoRecipeOf,
  modelLabel,
  selectByDev,
  type DpoRecipe,
  type StageOutputs,
} from "@agentlab/core";
import { storedDevCandidates } from "./select";
import { evalModelOf } from "./models";
import type { StageCtx, StageResult } from "./context";

// `dpo_start:r<k>`: the policy round k samples from and starts DPO from (its reference).
// Round 1: the dev selection among the base and every SFT epoch (the SFT start; a tie keeps the
// base, so DPO may start from the base). Round k > 1: round k−1's dev-best DPO epoch, by the same
// order and tie rule.

/** The round of a DPO stage and the recipe's DPO block; a refusal naming the stage when either is missing. */
export function dpoRound(c: StageCtx): { round: number; dpo: DpoRecipe } {
  const dpo = dpoRecipeOf(c.config);
  const round = c.stage.round;
  if (!dpo || !round) throw new DomainError("PRECONDITION_FAILED", `${c.stage.key} runs only in an sft+dpo experiment`);
  return { round, dpo };
}

export async function dpoStartStage(c: StageCtx): Promise<StageResult<"dpo_start">> {
  const { round } = dpoRound(c);
  const candidates = await storedDevCandidates(c.services.db, c.experimentId, c.config);
  let output: StageOutputs["dpo_start"];
  if (round === 1) {
    const decision = selectByDev(candidates.filter((d) => d.ref.model !== "dpo"));
    output = {
      round,
      start: decision.selected,
      label: modelLabel(decision.selected),
      adapter: null,
      trainingMethod: null,
      reason: decision.reason,
    };
  } else {
    const best = bestBy(candidates, (r) => r.model === "dpo" && r.round === round - 1);
    if (!best)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `round ${round - 1} has no DPO epoch with dev verdicts to start from`,
      );
    const pct = `${((100 * best.passed) / Math.max(1, best.n)).toFixed(1)}% (${best.passed}/${best.n})`;
    output = {
      round,
      start: best.ref,
      label: modelLabel(best.ref),
      adapter: null,
      trainingMethod: null,
      reason: `${modelLabel(best.ref)} is round ${round - 1}'s best DPO epoch on dev, ${pct}.`,
    };
  }
  const m = evalModelOf(c, output.start);
  return { state: "succeeded", output: { ...output, adapter: m.adapter, trainingMethod: m.trainingMethod } };
}
