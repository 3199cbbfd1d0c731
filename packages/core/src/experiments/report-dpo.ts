import type { PairStats } from "../preference/stats";
import type { CompareOptions } from "../stats/compare";
import { testSummary, type TestSummaryRow } from "./report-stats";
import { outcomeScore } from "./report-samples";
import type { TaskOutcome } from "./report-tasks";
import { bestBy, modelKey, modelLabel, type DevCandidate, type ModelRef, type SelectionRow } from "./selection";

// The sft+dpo part of the report: what each round's pairs were, which SFT and which DPO
// model dev picked within their kind, and the three pairwise comparisons on test — base vs SFT,
// base vs DPO, SFT vs DPO — each with the clustered statistics of the main comparison. The
// selection itself (base < SFT < DPO on ties) stays the report's outcome.

export type DpoRoundSummary = { round: number; policy: ModelRef; policyLabel: string; stats: PairStats | null };

/** One pairwise test comparison: `row.base` is side a, `row.sft` side b, Δ = b − a. */
export type DpoComparison = { a: ModelRef; aLabel: string; b: ModelRef; bLabel: string; row: TestSummaryRow };

export type DpoReportSection = {
  rounds: DpoRoundSummary[];
  /** The dev-best SFT epoch and the dev-best DPO epoch (each within its kind, same tie rule); null when none was evaluated. */
  selectedSft: ModelRef | null;
  selectedDpo: ModelRef | null;
  /** Dev pass@1 of every DPO epoch (descriptive: dev chose among them). */
  devPoints: { round: number; seed: number; epoch: number; pass1: number }[];
  comparisons: DpoComparison[];
  note: string;
  /** What the preference slot trained: "RFT" for the sft+rft control; absent in reports from before it was named. */
  arm?: "DPO" | "RFT";
};

export type DpoReportInput = {
  rounds: DpoRoundSummary[];
  table: readonly SelectionRow[];
  test: Record<string, TaskOutcome[]>;
  stats: CompareOptions & { iterations: number; seed: number };
};

const note = (arm: string) =>
  "Each comparison pairs the tasks graded for both models on test, clustered by source group like the main comparison; " +
  `the SFT and ${arm} models are each dev's best of their kind, so the three tests share the dev selection's optimism only through that choice.`;

/** One pairwise comparison on test over the tasks graded for both models. */
function pairedTestComparison(
  a: ModelRef,
  b: ModelRef,
  test: DpoReportInput["test"],
  stats: DpoReportInput["stats"],
): DpoComparison {
  const as = test[modelKey(a)] ?? [];
  const bs = new Map((test[modelKey(b)] ?? []).map((o) => [o.taskId, o]));
  const paired = as.flatMap((x) => {
    const y = bs.get(x.taskId);
    return y ? [{ x, y }] : [];
  });
  const row = testSummary(
    paired.map(({ x, y }) => ({ group: x.group, cluster: x.cluster, base: outcomeScore(x), treated: outcomeScore(y) })),
    paired.map(({ x }) => ({ group: x.group, cluster: x.cluster, pass: outcomeScore(x) })),
    paired.map(({ x, y }) => ({ group: x.group, cluster: x.cluster, pass: outcomeScore(y) })),
    modelLabel(b),
    stats,
  );
  return { a, aLabel: modelLabel(a), b, bLabel: modelLabel(b), row };
}

/**
 * The dev-best SFT model and the dev-best model of `kind` (each within its kind, the selection's
 * tie rule), and base vs SFT, base vs it, SFT vs it on test where both sides were tested. Shared by
 * the DPO and GRPO sections.
 */
export function threeWayComparisons(
  input: Omit<DpoReportInput, "rounds">,
  kind: "dpo" | "grpo",
): { sft: ModelRef | null; best: ModelRef | null; comparisons: DpoComparison[] } {
  const candidates: DevCandidate[] = input.table.map((r) => ({ ref: r.ref, n: r.n, passed: r.passed }));
  const sft = bestBy(candidates, (r) => r.model === "adapter")?.ref ?? null;
  const best = bestBy(candidates, (r) => r.model === kind)?.ref ?? null;
  const base: ModelRef = { model: "base" };
  const onTest = (r: ModelRef | null): r is ModelRef => r !== null && input.test[modelKey(r)] !== undefined;
  const pairs: [ModelRef | null, ModelRef | null][] = [
    [base, sft],
    [base, best],
    [sft, best],
  ];
  const comparisons = pairs.flatMap(([a, b]) =>
    onTest(a) && onTest(b) ? [pairedTestComparison(a, b, input.test, input.stats)] : [],
  );
  return { sft, best, comparisons };
}

export function dpoSection(input: DpoReportInput): DpoReportSection {
  const { sft, best, comparisons } = threeWayComparisons(input, "dpo");
  const arm = input.table.some((r) => r.ref.model === "dpo" && r.ref.objective === "rft") ? "RFT" : "DPO";
  return {
    rounds: input.rounds,
    selectedSft: sft,
    selectedDpo: best,
    devPoints: input.table.flatMap((r) =>
      r.ref.model === "dpo" ? [{ round: r.ref.round, seed: r.ref.seed, epoch: r.ref.epoch, pass1: r.pass1 }] : [],
    ),
    comparisons,
    note: note(arm),
    arm,
  };
}
