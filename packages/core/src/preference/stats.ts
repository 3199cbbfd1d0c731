import type { ChosenSource, FailingLayer, PairSource, RejectedSource, ScoredPair } from "./pairs";

// What a round's pairs are made of ("pair statistics are stored"): counts by failing
// layer and by source, and the margins before training of the kept and of the filtered-out pairs.

export type MarginSummary = { n: number; min: number; median: number; mean: number; max: number } | null;

export type PairStats = {
  kept: number;
  dropped: number;
  downweighted: number;
  byFailingLayer: Partial<Record<FailingLayer, number>>;
  byChosenSource: Partial<Record<ChosenSource, number>>;
  byRejectedSource: Partial<Record<RejectedSource, number>>;
  byPairSource?: Partial<Record<PairSource, number>>;
  tasks: number;
  marginKept: MarginSummary;
  marginDropped: MarginSummary;
};

export function summarizeMargins(values: readonly number[]): MarginSummary {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  const median = v.length % 2 ? (v[mid] ?? 0) : ((v[mid - 1] ?? 0) + (v[mid] ?? 0)) / 2;
  return {
    n: v.length,
    min: v[0] ?? 0,
    median,
    mean: v.reduce((a, b) => a + b, 0) / v.length,
    max: v[v.length - 1] ?? 0,
  };
}

function countBy<K extends string>(
  pairs: readonly ScoredPair[],
  key: (p: ScoredPair) => K,
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const p of pairs) out[key(p)] = (out[key(p)] ?? 0) + 1;
  return out;
}

/** Counts are over the kept pairs (what DPO trains on); dropped ones are counted and summarized apart. */
export function pairStats(
  kept: readonly ScoredPair[],
  dropped: readonly ScoredPair[],
  downweighted: number,
): PairStats {
  return {
    kept: kept.length,
    dropped: dropped.length,
    downweighted,
    byFailingLayer: countBy(kept, (p) => p.failingLayer),
    byChosenSource: countBy(kept, (p) => p.chosenSource),
    byRejectedSource: countBy(kept, (p) => p.rejectedSource),
    byPairSource: countBy(kept, (p) => p.pairSource),
    tasks: new Set(kept.map((p) => p.taskId)).size,
    marginKept: summarizeMargins(kept.map((p) => p.marginBefore)),
    marginDropped: summarizeMargins(dropped.map((p) => p.marginBefore)),
  };
}
