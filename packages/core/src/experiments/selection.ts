import { z } from "zod";
import { DomainError } from "../errors";

// Dev selection (brief §2): the base competes with every epoch of every seed; a candidate must be
// strictly better to displace the one before it in this order: base, then seeds in config order,
// then epochs ascending. So a tie keeps the base, and ties between epochs keep the lower seed
// index, then the earlier epoch (less training is the simpler explanation). With sft+dpo
// the DPO epochs come last (round, then seed index, then epoch): base < SFT < DPO on a tie.

export const ModelRef = z.discriminatedUnion("model", [
  z.object({ model: z.literal("base") }),
  z.object({
    model: z.literal("adapter"),
    seed: z.number().int(),
    seedIndex: z.number().int().min(0),
    epoch: z.number().int().min(1),
  }),
  /**
   * A DPO epoch of one seed in one round, trained from that round's start policy. `objective`
   * "rft": the sft+rft control's run of the same slot (the SFT term alone on the chosen answers),
   * labelled RFT; absent: DPO. It names the run, never its key (modelKey).
   */
  z.object({
    model: z.literal("dpo"),
    seed: z.number().int(),
    seedIndex: z.number().int().min(0),
    round: z.number().int().min(1),
    epoch: z.number().int().min(1),
    objective: z.enum(["dpo", "rft"]).optional(),
  }),
  /** A GRPO snapshot of one seed (`epoch`: the snapshot's number, one per K steps), from the SFT start. */
  z.object({
    model: z.literal("grpo"),
    seed: z.number().int(),
    seedIndex: z.number().int().min(0),
    epoch: z.number().int().min(1),
  }),
]);
export type ModelRef = z.infer<typeof ModelRef>;

export function modelLabel(m: ModelRef): string {
  if (m.model === "base") return "base";
  if (m.model === "dpo")
    return `${m.objective === "rft" ? "RFT" : "DPO"} r${m.round} · seed ${m.seed} · epoch ${m.epoch}`;
  if (m.model === "grpo") return `GRPO · seed ${m.seed} · snapshot ${m.epoch}`;
  return `seed ${m.seed} · epoch ${m.epoch}`;
}
/** The evaluations' model key; no ':' (grade-batch item keys are `model:task:sample`). */
export function modelKey(m: ModelRef): string {
  if (m.model === "base") return "base";
  if (m.model === "dpo") return `dpo-s${m.seed}r${m.round}e${m.epoch}`;
  if (m.model === "grpo") return `grpo-s${m.seed}e${m.epoch}`;
  return `s${m.seed}e${m.epoch}`;
}

export type DevCandidate = { ref: ModelRef; n: number; passed: number };

export type SelectionRow = {
  ref: ModelRef;
  label: string;
  n: number;
  passed: number;
  pass1: number;
  selected: boolean;
};

export type SelectionDecision = {
  selected: ModelRef;
  outcome: "adapter_selected" | "base_kept";
  reason: string;
  rule: string;
  table: SelectionRow[];
};

export type DevCurvePoint = { seed: number; epoch: number; pass1: number };
export type DevCurve = { base: number; points: DevCurvePoint[] };

/** Dev pass@1 of the base and of each seed's SFT epochs, from the selection table (descriptive: selection reads dev). */
export function devCurveOf(table: readonly SelectionRow[]): DevCurve {
  return {
    base: table.find((r) => r.ref.model === "base")?.pass1 ?? 0,
    points: table.flatMap((r) =>
      r.ref.model === "adapter" ? [{ seed: r.ref.seed, epoch: r.ref.epoch, pass1: r.pass1 }] : [],
    ),
  };
}

export const SELECTION_RULE =
  "Highest dev pass@1 among the base and every epoch of every seed; the base is listed first and a candidate must be strictly better " +
  "to displace the current best, so a tie keeps the base, and ties between adapters keep the lower seed index, then the earlier epoch.";

/** The rule when GRPO snapshots compete too (sft+grpo recipes). */
export const SELECTION_RULE_GRPO =
  "Highest dev pass@1 among the base, every SFT epoch of every seed and every GRPO snapshot of every seed; a candidate must be " +
  "strictly better to displace the current best in the order base, SFT (seed index, epoch), GRPO (seed index, snapshot), so a tie " +
  "keeps the simpler model: the base before SFT before GRPO, then the lower seed index, the earlier snapshot.";

/** The rule when DPO epochs compete too (sft+dpo recipes). */
export const SELECTION_RULE_DPO =
  "Highest dev pass@1 among the base, every SFT epoch of every seed and every DPO epoch of every round and seed; a candidate must be " +
  "strictly better to displace the current best in the order base, SFT (seed index, epoch), DPO (round, seed index, epoch), so a tie " +
  "keeps the simpler model: the base before SFT before DPO, then the earlier round, the lower seed index, the earlier epoch.";

function order(r: ModelRef): [number, number, number, number] {
  if (r.model === "base") return [0, 0, 0, 0];
  if (r.model === "adapter") return [1, 0, r.seedIndex, r.epoch];
  if (r.model === "grpo") return [3, 0, r.seedIndex, r.epoch];
  return [2, r.round, r.seedIndex, r.epoch];
}

function compareOrder(a: ModelRef, b: ModelRef): number {
  const [x, y] = [order(a), order(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || x[3] - y[3];
}

// pass@1 compared as exact fractions, so 1/3 vs 2/6 is a tie and not a float accident.
const better = (a: DevCandidate, b: DevCandidate) => a.passed * b.n > b.passed * a.n;

export function selectByDev(candidates: readonly DevCandidate[]): SelectionDecision {
  const base = candidates.filter((c) => c.ref.model === "base");
  if (base.length !== 1)
    throw new DomainError("PRECONDITION_FAILED", "selection needs exactly one base evaluation on dev");
  const sizes = new Set(candidates.map((c) => c.n));
  if (sizes.size !== 1)
    throw new DomainError("PRECONDITION_FAILED", "every candidate must be evaluated on the same dev tasks");
  const sorted = [...candidates].sort((a, b) => compareOrder(a.ref, b.ref));
  let best = sorted[0] as DevCandidate;
  for (const c of sorted.slice(1)) if (better(c, best)) best = c;
  const pass1 = (c: DevCandidate) => (c.n ? c.passed / c.n : 0);
  const table = sorted.map((c) => ({
    ref: c.ref,
    label: modelLabel(c.ref),
    n: c.n,
    passed: c.passed,
    pass1: pass1(c),
    selected: c === best,
  }));
  const baseRow = base[0] as DevCandidate;
  const bestAdapter = sorted
    .filter((c) => c.ref.model !== "base")
    .reduce<DevCandidate | null>((acc, c) => (!acc || better(c, acc) ? c : acc), null);
  const pct = (c: DevCandidate) => `${(100 * pass1(c)).toFixed(1)}% (${c.passed}/${c.n})`;
  const rule = candidates.some((c) => c.ref.model === "dpo")
    ? SELECTION_RULE_DPO
    : candidates.some((c) => c.ref.model === "grpo")
      ? SELECTION_RULE_GRPO
      : SELECTION_RULE;
  if (best.ref.model === "base") {
    const reason = bestAdapter
      ? `No adapter beat the base on dev pass@1: the best adapter (${modelLabel(bestAdapter.ref)}) scored ${pct(bestAdapter)} against the base's ${pct(baseRow)}; a tie keeps the base.`
      : "No adapter was evaluated, so the base is kept.";
    return { selected: best.ref, outcome: "base_kept", reason, rule, table };
  }
  return {
    selected: best.ref,
    outcome: "adapter_selected",
    reason: `${modelLabel(best.ref)} has the highest dev pass@1, ${pct(best)}, against the base's ${pct(baseRow)}.`,
    rule,
    table,
  };
}

/**
 * Each seed's best epoch by the same rule (earlier epoch on ties); these go to the test evaluation
 * for the per-seed table. `kind` "dpo": each seed's best DPO epoch over every round instead;
 * "grpo": each seed's best GRPO snapshot.
 */
export function bestEpochPerSeed(
  candidates: readonly DevCandidate[],
  kind: "adapter" | "dpo" | "grpo" = "adapter",
): DevCandidate[] {
  const bySeed = new Map<number, DevCandidate>();
  for (const c of [...candidates].sort((a, b) => compareOrder(a.ref, b.ref))) {
    if (c.ref.model !== kind) continue;
    const cur = bySeed.get(c.ref.seedIndex);
    if (!cur || better(c, cur)) bySeed.set(c.ref.seedIndex, c);
  }
  return [...bySeed.values()];
}

/** The dev-best of the candidates `keep` admits, by the selection's order and tie rule; null when none. */
export function bestBy(candidates: readonly DevCandidate[], keep: (r: ModelRef) => boolean): DevCandidate | null {
  let best: DevCandidate | null = null;
  for (const c of [...candidates].sort((a, b) => compareOrder(a.ref, b.ref)))
    if (keep(c.ref) && (!best || better(c, best))) best = c;
  return best;
}
