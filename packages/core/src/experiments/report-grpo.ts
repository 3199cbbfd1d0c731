import { threeWayComparisons, type DpoComparison, type DpoReportInput } from "./report-dpo";
import type { ModelRef } from "./selection";

// The sft+grpo part of the report: which SFT and which GRPO model dev picked within their kind,
// and the three pairwise comparisons on test (base vs SFT, base vs GRPO, SFT vs GRPO), each paired
// and clustered like the main comparison. The selection itself (base < SFT < GRPO on ties) stays
// the report's outcome.

export type GrpoReportSection = {
  /** The dev-best SFT epoch and the dev-best GRPO snapshot (each within its kind); null when none was evaluated. */
  selectedSft: ModelRef | null;
  selectedGrpo: ModelRef | null;
  /** Dev pass@1 of every GRPO snapshot (descriptive: dev chose among them). */
  devPoints: { seed: number; snapshot: number; pass1: number }[];
  comparisons: DpoComparison[];
  note: string;
};

const NOTE =
  "Each comparison pairs the tasks graded for both models on test, clustered like the main comparison; the SFT and GRPO " +
  "models are each dev's best of their kind. GRPO trained on train prompts only, rewarded by the isolated judge.";

export function grpoSection(input: Omit<DpoReportInput, "rounds">): GrpoReportSection {
  const { sft, best, comparisons } = threeWayComparisons(input, "grpo");
  return {
    selectedSft: sft,
    selectedGrpo: best,
    devPoints: input.table.flatMap((r) =>
      r.ref.model === "grpo" ? [{ seed: r.ref.seed, snapshot: r.ref.epoch, pass1: r.pass1 }] : [],
    ),
    comparisons,
    note: NOTE,
  };
}
