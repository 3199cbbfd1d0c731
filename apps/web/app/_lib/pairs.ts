import { ChosenSource, FailingLayer, PairSource, RejectedSource } from "@agentlab/core";
import { niceTicks } from "./chart";

// The pair browser's state as URL parameters (a filtered view can be linked and survives a
// reload), its API filter, the header's tallies and the margin histogram. Pure, unit-tested.

export const PAIR_PAGE_SIZE = 25;

export type PairsView = {
  round: number | null;
  layer: FailingLayer | null;
  chosen: ChosenSource | null;
  rejected: RejectedSource | null;
  source: PairSource | null;
  page: number;
};
export const defaultPairsView: PairsView = {
  round: null,
  layer: null,
  chosen: null,
  rejected: null,
  source: null,
  page: 0,
};

const nonNegativeInt = (s: string | null): number | null => {
  if (s === null || !/^\d+$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
};

/** Unknown values (a hand-edited URL) fall back to "all", never reach the API. */
export function pairsViewFromParams(p: URLSearchParams): PairsView {
  return {
    round: nonNegativeInt(p.get("round")),
    layer: FailingLayer.safeParse(p.get("layer")).data ?? null,
    chosen: ChosenSource.safeParse(p.get("chosen")).data ?? null,
    rejected: RejectedSource.safeParse(p.get("rejected")).data ?? null,
    source: PairSource.safeParse(p.get("source")).data ?? null,
    page: nonNegativeInt(p.get("page")) ?? 0,
  };
}

export function pairsViewToParams(v: PairsView): string {
  const p = new URLSearchParams();
  if (v.round !== null) p.set("round", String(v.round));
  if (v.layer) p.set("layer", v.layer);
  if (v.chosen) p.set("chosen", v.chosen);
  if (v.rejected) p.set("rejected", v.rejected);
  if (v.source) p.set("source", v.source);
  if (v.page > 0) p.set("page", String(v.page));
  return p.toString();
}

/** A changed filter starts again at the first page. */
export const withFilter = (v: PairsView, change: Partial<Omit<PairsView, "page">>): PairsView => ({
  ...v,
  ...change,
  page: 0,
});

export type PairFilterInput = {
  experimentId: string;
  round?: number;
  failingLayer?: FailingLayer;
  chosenSource?: ChosenSource;
  rejectedSource?: RejectedSource;
  pairSource?: PairSource;
};

export function pairsFilter(experimentId: string, v: PairsView): PairFilterInput {
  return {
    experimentId,
    ...(v.round !== null ? { round: v.round } : {}),
    ...(v.layer ? { failingLayer: v.layer } : {}),
    ...(v.chosen ? { chosenSource: v.chosen } : {}),
    ...(v.rejected ? { rejectedSource: v.rejected } : {}),
    ...(v.source ? { pairSource: v.source } : {}),
  };
}

export type GroupCount = {
  round: number;
  failingLayer: FailingLayer;
  chosenSource: ChosenSource;
  rejectedSource: RejectedSource;
  pairSource: PairSource;
  pairs: number;
};

export type PairTally = {
  total: number;
  rounds: { round: number; pairs: number }[];
  byLayer: Record<FailingLayer, number>;
  byChosen: Record<ChosenSource, number>;
  byRejected: Record<RejectedSource, number>;
  bySource: Record<PairSource, number>;
};

const zeros = <K extends string>(keys: readonly K[]): Record<K, number> =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/**
 * Counts of the chosen round (every round when null): per failing layer and per source, each
 * with every value listed (a zero is a fact worth showing), and the pairs of each round.
 */
export function tallyPairs(groups: readonly GroupCount[], round: number | null): PairTally {
  const t: PairTally = {
    total: 0,
    rounds: [],
    byLayer: zeros(FailingLayer.options),
    byChosen: zeros(ChosenSource.options),
    byRejected: zeros(RejectedSource.options),
    bySource: zeros(PairSource.options),
  };
  const perRound = new Map<number, number>();
  for (const g of groups) {
    perRound.set(g.round, (perRound.get(g.round) ?? 0) + g.pairs);
    if (round !== null && g.round !== round) continue;
    t.total += g.pairs;
    t.byLayer[g.failingLayer] += g.pairs;
    t.byChosen[g.chosenSource] += g.pairs;
    t.byRejected[g.rejectedSource] += g.pairs;
    t.bySource[g.pairSource] += g.pairs;
  }
  t.rounds = [...perRound].sort(([a], [b]) => a - b).map(([r, pairs]) => ({ round: r, pairs }));
  return t;
}

export type MarginBin = { lo: number; hi: number; count: number; downweighted: number };

/**
 * Equal-width bins on round edges (the step niceTicks picks for about `bins` bins) covering every
 * margin; a value on an edge goes to the bin it opens. `downweighted` counts the pairs whose
 * weight the margin filter lowered below 1. A single distinct value gets one bin of width 1.
 */
export function marginHistogram(values: readonly { margin: number; weight: number }[], bins = 16): MarginBin[] {
  const finite = values.filter((v) => Number.isFinite(v.margin));
  if (finite.length === 0) return [];
  const ms = finite.map((v) => v.margin);
  const min = Math.min(...ms);
  const max = Math.max(...ms);
  const ticks = niceTicks(min, max, bins);
  const step = min === max || ticks.length < 2 ? 1 : (ticks[1] ?? 1) - (ticks[0] ?? 0);
  const lo = min === max ? min - 0.5 : Math.floor(min / step + 1e-9) * step;
  const n = Math.max(1, Math.floor((max - lo) / step + 1e-9) + 1);
  const out: MarginBin[] = Array.from({ length: n }, (_, i) => ({
    lo: Number((lo + i * step).toPrecision(12)),
    hi: Number((lo + (i + 1) * step).toPrecision(12)),
    count: 0,
    downweighted: 0,
  }));
  for (const v of finite) {
    const i = Math.min(n - 1, Math.max(0, Math.floor((v.margin - lo) / step + 1e-9)));
    const bin = out[i];
    if (!bin) continue;
    bin.count += 1;
    if (v.weight < 1) bin.downweighted += 1;
  }
  return out;
}

export const LAYER_TEXT: Record<FailingLayer, string> = {
  syntax: "syntax",
  public: "public tests",
  hidden: "hidden tests",
  limits: "time/memory limit",
  tampered: "tampered",
};

export const SOURCE_TEXT: Record<ChosenSource | RejectedSource, string> = {
  teacher: "teacher",
  reference: "reference",
  on_policy: "on-policy sample",
  mutant: "killed mutant",
  buggy: "buggy file",
  episode: "episode continuation",
};

export const PAIR_SOURCE_TEXT: Record<PairSource, string> = {
  cross_state: "cross-state",
  near_miss: "near-miss",
  on_policy: "on-policy same prompt",
  episode_branch: "episode branch (same state)",
};
