import type { DpoComparison, DpoReportSection, ModelRef } from "@agentlab/core";

// The report's three pairwise comparisons of an sft+dpo experiment in a fixed order —
// base vs SFT, base vs DPO, SFT vs DPO — each either the stored comparison or why there is none,
// and the DPO dev points as one series per round and seed. Pure, unit-tested.

export type ThreeWayRow =
  | { kind: "compared"; title: string; comparison: DpoComparison }
  | { kind: "missing"; title: string; reason: string };

const same = (a: ModelRef, b: ModelRef) => JSON.stringify(a) === JSON.stringify(b);

export function threeWayRows(section: DpoReportSection): ThreeWayRow[] {
  const base: ModelRef = { model: "base" };
  const arm = section.arm ?? "DPO";
  const slots: { title: string; a: ModelRef | null; b: ModelRef | null; none: string }[] = [
    { title: "base vs SFT", a: base, b: section.selectedSft, none: "no SFT epoch was evaluated on dev" },
    { title: `base vs ${arm}`, a: base, b: section.selectedDpo, none: `no ${arm} epoch was evaluated on dev` },
    {
      title: `SFT vs ${arm}`,
      a: section.selectedSft,
      b: section.selectedDpo,
      none: `no ${section.selectedSft ? arm : "SFT"} epoch was evaluated on dev`,
    },
  ];
  return slots.map(({ title, a, b, none }) => {
    if (!a || !b) return { kind: "missing", title, reason: none };
    const comparison = section.comparisons.find((c) => same(c.a, a) && same(c.b, b));
    return comparison
      ? { kind: "compared", title, comparison }
      : { kind: "missing", title, reason: "one of the two models has no graded test answers" };
  });
}

export type DevSeries = { name: string; round: number; seed: number; points: { x: number; y: number }[] };

/** Dev pass@1 by DPO epoch, one series per (round, seed), in round then seed order. */
export function dpoDevSeries(points: DpoReportSection["devPoints"], arm: "DPO" | "RFT" = "DPO"): DevSeries[] {
  const by = new Map<string, DevSeries>();
  for (const p of points) {
    const k = `${p.round}:${p.seed}`;
    const s = by.get(k) ?? { name: `${arm} r${p.round} · seed ${p.seed}`, round: p.round, seed: p.seed, points: [] };
    s.points.push({ x: p.epoch, y: p.pass1 });
    by.set(k, s);
  }
  return [...by.values()]
    .map((s) => ({ ...s, points: [...s.points].sort((a, b) => a.x - b.x) }))
    .sort((a, b) => a.round - b.round || a.seed - b.seed);
}
