import type { DpoComparison, DpoReportSection, GrpoReportSection, ModelRef } from "@agentlab/core";

// The report's three pairwise comparisons of an sft+dpo (or sft+rft, sft+grpo) experiment in a
// fixed order — base vs SFT, base vs the arm, SFT vs the arm — each either the stored comparison or
// why there is none, and the arm's dev points as one series per round and seed. Pure, unit-tested.

/** What the three-way table reads of a report's method section. */
export type ThreeWay = {
  arm: "DPO" | "RFT" | "GRPO";
  /** What dev evaluates of the arm: its epochs (DPO, RFT) or its snapshots (GRPO). */
  unit: "epoch" | "snapshot";
  selectedSft: ModelRef | null;
  selectedArm: ModelRef | null;
  comparisons: DpoComparison[];
};

export const dpoThreeWay = (s: DpoReportSection): ThreeWay => ({
  arm: s.arm ?? "DPO",
  unit: "epoch",
  selectedSft: s.selectedSft,
  selectedArm: s.selectedDpo,
  comparisons: s.comparisons,
});

export const grpoThreeWay = (s: GrpoReportSection): ThreeWay => ({
  arm: "GRPO",
  unit: "snapshot",
  selectedSft: s.selectedSft,
  selectedArm: s.selectedGrpo,
  comparisons: s.comparisons,
});

export type ThreeWayRow =
  | { kind: "compared"; title: string; comparison: DpoComparison }
  | { kind: "missing"; title: string; reason: string };

const same = (a: ModelRef, b: ModelRef) => JSON.stringify(a) === JSON.stringify(b);

export function threeWayRows(section: ThreeWay): ThreeWayRow[] {
  const base: ModelRef = { model: "base" };
  const { arm, unit } = section;
  const slots: { title: string; a: ModelRef | null; b: ModelRef | null; none: string }[] = [
    { title: "base vs SFT", a: base, b: section.selectedSft, none: "no SFT epoch was evaluated on dev" },
    { title: `base vs ${arm}`, a: base, b: section.selectedArm, none: `no ${arm} ${unit} was evaluated on dev` },
    {
      title: `SFT vs ${arm}`,
      a: section.selectedSft,
      b: section.selectedArm,
      none: section.selectedSft ? `no ${arm} ${unit} was evaluated on dev` : "no SFT epoch was evaluated on dev",
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

/** Dev pass@1 by GRPO snapshot, one series per seed (GRPO has one round). */
export const grpoDevSeries = (points: GrpoReportSection["devPoints"]): DevSeries[] =>
  dpoDevSeries(
    points.map((p) => ({ round: 1, seed: p.seed, epoch: p.snapshot, pass1: p.pass1 })),
    "GRPO",
  ).map((s) => ({ ...s, name: `GRPO · seed ${s.seed}` }));

/** Dev pass@1 by DPO epoch, one series per (round, seed), in round then seed order. */
export function dpoDevSeries(points: DpoReportSection["devPoints"], arm: ThreeWay["arm"] = "DPO"): DevSeries[] {
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
