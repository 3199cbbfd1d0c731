import { z } from "zod";
import { DomainError } from "../errors";

// Dev selection (brief §2): the base competes with every epoch of every seed; a candidate must be
// strictly better to displace the one before it in this order: base, then seeds in config order,
// then epochs ascending. So a tie keeps the base, and ties between epochs keep the lower seed
// index, then the earlier epoch (less training is the simpler explanation).

export const ModelRef = z.discriminatedUnion("model", [
  z.object({ model: z.literal("base") }),
  z.object({
    model: z.literal("adapter"),
    seed: z.number().int(),
    seedIndex: z.number().int().min(0),
    epoch: z.number().int().min(1),
  }),
]);
export type ModelRef = z.infer<typeof ModelRef>;

export const modelLabel = (m: ModelRef): string => (m.model === "base" ? "base" : `seed ${m.seed} · epoch ${m.epoch}`);
export const modelKey = (m: ModelRef): string => (m.model === "base" ? "base" : `s${m.seed}e${m.epoch}`);

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

export const SELECTION_RULE =
  "Highest dev pass@1 among the base and every epoch of every seed; the base is listed first and a candidate must be strictly better " +
  "to displace the current best, so a tie keeps the base, and ties between adapters keep the lower seed index, then the earlier epoch.";

const order = (r: ModelRef): [number, number, number] => (r.model === "base" ? [0, 0, 0] : [1, r.seedIndex, r.epoch]);

function compareOrder(a: ModelRef, b: ModelRef): number {
  const [x, y] = [order(a), order(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
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
    .filter((c) => c.ref.model === "adapter")
    .reduce<DevCandidate | null>((acc, c) => (!acc || better(c, acc) ? c : acc), null);
  const pct = (c: DevCandidate) => `${(100 * pass1(c)).toFixed(1)}% (${c.passed}/${c.n})`;
  if (best.ref.model === "base") {
    const reason = bestAdapter
      ? `No adapter beat the base on dev pass@1: the best adapter (${modelLabel(bestAdapter.ref)}) scored ${pct(bestAdapter)} against the base's ${pct(baseRow)}; a tie keeps the base.`
      : "No adapter was evaluated, so the base is kept.";
    return { selected: best.ref, outcome: "base_kept", reason, rule: SELECTION_RULE, table };
  }
  return {
    selected: best.ref,
    outcome: "adapter_selected",
    reason: `${modelLabel(best.ref)} has the highest dev pass@1, ${pct(best)}, against the base's ${pct(baseRow)}.`,
    rule: SELECTION_RULE,
    table,
  };
}

/** Each seed's best epoch by the same rule (earlier epoch on ties); these go to the test evaluation for the per-seed table. */
export function bestEpochPerSeed(candidates: readonly DevCandidate[]): DevCandidate[] {
  const bySeed = new Map<number, DevCandidate>();
  for (const c of [...candidates].sort((a, b) => compareOrder(a.ref, b.ref))) {
    if (c.ref.model !== "adapter") continue;
    const cur = bySeed.get(c.ref.seedIndex);
    if (!cur || better(c, cur)) bySeed.set(c.ref.seedIndex, c);
  }
  return [...bySeed.values()];
}
