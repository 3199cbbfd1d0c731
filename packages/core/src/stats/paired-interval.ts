import { clusterBootstrap } from "./bootstrap";
import { clusterSe, type Clusters } from "./clusters";
import { normQuantile } from "./distributions";
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

/**
 * Interval of one model's pass rate Σpass/n by the same rule: the bootstrap where at least
 * MIN_BOOTSTRAP_UNITS units hold a pass and as many a failure, else Wilson's score interval on
 * counts divided by the design effect, and the exact bound when every outcome is 0 (or every one 1).
 */
export function rateInterval(c: Clusters, level: number, iterations: number, seed: number): PairedInterval {
  const g = c.groups;
  const a = (1 - level) / 2;
  const p = c.n ? c.treatedSum / c.n : 0;
  if (c.n === 0 || p === 0 || p === 1) {
    const u = noEventUpperBound(g, a);
    return {
      ci: p === 1 ? [1 - u, 1] : [0, u],
      intervalMethod: "exact-no-discordance",
      ciMethod: `exact bound with every outcome ${p === 1 ? "a pass" : "a failure"}: 1 − (${a})^(1/${g}) over ${g} ${unitWord(c)} (Clopper–Pearson)`,
    };
  }
  let passUnits = 0;
  let failUnits = 0;
  for (let i = 0; i < g; i++) {
    const s = c.sums[i] ?? 0;
    if (s > 0) passUnits++;
    if (s < (c.counts[i] ?? 0)) failUnits++;
  }
  const se = clusterSe(c.sums, c.counts);
  if (Math.min(passUnits, failUnits) >= MIN_BOOTSTRAP_UNITS && se > 0) {
    const b = clusterBootstrap(c.sums, c.counts, { iterations, seed, level }, [0, 1]);
    return {
      ci: [b.lo, b.hi],
      intervalMethod: "bootstrap-studentized",
      ciMethod: b.method.replace("source groups", unitWord(c)),
    };
  }
  const iid = (c.sumSq / c.n - p * p) / c.n;
  const deff = iid > 0 && se > 0 ? Math.max(1, (se * se) / iid) : 1;
  const n = c.n / deff;
  const z = normQuantile((1 + level) / 2);
  const mid = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return {
    ci: [Math.max(0, mid - half), Math.min(1, mid + half)],
    intervalMethod: "score-design-effect",
    ciMethod: `Wilson score interval on effective counts (design effect ${deff.toFixed(2)}, effective n ${n.toFixed(1)})`,
  };
}
