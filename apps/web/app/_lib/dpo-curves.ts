import type { RouterOutputs } from "./types";

// Which DPO round the experiment page shows. Pure, unit-tested.

export type DpoRun = RouterOutputs["dpo"]["curves"][number];

export type DpoRoundShown = { round: number; seeds: number; started: number };

/** The rounds of the runs in order, with how many seeds each has and how many reported a step. */
export function dpoRoundsShown(runs: readonly { round: number; points: readonly unknown[] }[]): DpoRoundShown[] {
  const by = new Map<number, DpoRoundShown>();
  for (const r of runs) {
    const cur = by.get(r.round) ?? { round: r.round, seeds: 0, started: 0 };
    cur.seeds += 1;
    if (r.points.length > 0) cur.started += 1;
    by.set(r.round, cur);
  }
  return [...by.values()].sort((a, b) => a.round - b.round);
}

/** Until one is picked: the latest round with a reported step (the one training now or last), else the first. */
export function defaultDpoRound(rounds: readonly DpoRoundShown[]): number {
  return rounds.filter((r) => r.started > 0).at(-1)?.round ?? rounds[0]?.round ?? 1;
}
