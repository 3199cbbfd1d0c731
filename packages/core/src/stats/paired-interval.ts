import { clusterBootstrap } from "./bootstrap";
import { clusterSe, type Clusters } from "./clusters";
import { noEventUpperBound, scoreIntervalWithDesignEffect } from "./score";

// Which interval the paired comparison gets. The studentized cluster bootstrap stays where it is
// well-behaved (enough units with a changed outcome); below that resampling degenerates, and an
// exact bound or a score interval with the design effect takes over. The choice depends on the
// data's shape only (how many units changed), never on where the interval lands.

/** Stable names of the interval methods, printed by the report and the CLI. */
export const INTERVAL_METHODS = [
  "bootstrap-studentized",
  "score-design-effect",
  "exact-no-discordance",
  "single-unit",
] as const;
export type IntervalMethod = (typeof INTERVAL_METHODS)[number];

/** Below this many units with a changed outcome the bootstrap gives way to the score interval. */
export const MIN_BOOTSTRAP_UNITS = 10;

export type PairedInterval = {
  ci: [number, number];
  intervalMethod: IntervalMethod;
  /** Human-readable description with the sizes behind it. */
  ciMethod: string;
};

const unitWord = (c: Clusters) => (c.unit === "cluster" ? "clusters" : "source groups");

export function pairedInterval(c: Clusters, level: number, iterations: number, seed: number): PairedInterval {
  const g = c.groups;
  const a = (1 - level) / 2;
  if (c.discordantUnits === 0) {
    const u = noEventUpperBound(g, a);
    return {
      ci: [-u, u],
      intervalMethod: "exact-no-discordance",
      ciMethod: `exact bound with no changed outcome: |Δ| ≤ 1 − (${a})^(1/${g}) over ${g} ${unitWord(c)} (Clopper–Pearson on the share of units that changed)`,
    };
  }
  if (g < 2)
    return {
      ci: [-1, 1],
      intervalMethod: "single-unit",
      ciMethod: `no interval: every task is in one ${c.unit === "cluster" ? "cluster" : "source group"}`,
    };
  const se = clusterSe(c.sums, c.counts);
  if (c.discordantUnits >= MIN_BOOTSTRAP_UNITS && se > 0) {
    const b = clusterBootstrap(c.sums, c.counts, { iterations, seed, level });
    if (Number.isFinite(b.hi - b.lo) && b.hi - b.lo < 2)
      return {
        ci: [b.lo, b.hi],
        intervalMethod: "bootstrap-studentized",
        ciMethod: b.method.replace("source groups", unitWord(c)),
      };
  }
  const s = scoreIntervalWithDesignEffect(c.gain, c.loss, c.sumSq, c.n, se, level);
  return {
    ci: [s.lo, s.hi],
    intervalMethod: "score-design-effect",
    ciMethod: `Tango score interval on effective counts (design effect ${s.designEffect.toFixed(2)}, effective n ${s.effectiveN.toFixed(1)}; ${c.discordantUnits} of ${g} ${unitWord(c)} changed)`,
  };
}
