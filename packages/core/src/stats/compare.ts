import { DomainError } from "../errors";
import { MIN_RELIABLE_GROUPS } from "./bootstrap";
import { clusterPairs, clusterSe, type Clusters, type InferenceUnit, type PairedInput } from "./clusters";
import { tQuantile } from "./distributions";
import { mcnemarExact } from "./mcnemar";
import { fitDiscordance, simulatedMde } from "./mde";
import { pairedInterval, type IntervalMethod } from "./paired-interval";
import { deriveSeed } from "./random";
import { signFlipTest } from "./signflip";

// The one paired comparison behind the report's test row, its per-seed rows and
// `agentlab stats compare`: a clustered test, a clustered interval, a label that needs both, and
// the minimum detectable effect of this design.

export type CompareOptions = {
  alpha?: number;
  /** Bootstrap resamples (default 10,000) and the seed of every random stream. */
  iterations?: number;
  seed?: number;
  /** Monte-Carlo sign flips when exact enumeration is out of reach (default 20,000). */
  permutations?: number;
  /** Power for the minimum detectable effect (default 0.8). */
  power?: number;
  /** "simulated" (default): the MDE of the rule, simulated for 0/1 outcomes; "approximate": the t formula. */
  mde?: "simulated" | "approximate";
};

/**
 * How the MDE was obtained: "simulated" = the smallest Δ at which this very rule (test AND
 * interval) is significant in `power` of draws from the fitted discordance; "approximate" = the t
 * formula on the cluster SE (pass rates, pooled rows, or when asked for).
 */
export type MdeMethod = "simulated" | "approximate";

/** Draws per Δ and bisection steps of the simulated MDE (bisection from 3× the formula's MDE, or 1, in 6 halvings; power estimated within about ±4%). */
export const MDE_SIMULATION = { reps: 120, steps: 6, iterations: 200, permutations: 1000 } as const;

export type PairedComparison = {
  n: number;
  /** Independent units of the inference (= `units`; kept under its old name). */
  groups: number;
  /** What the inference treats as independent: declared clusters, else source groups. */
  unit: InferenceUnit;
  units: number;
  /** Distinct source groups among the tasks. */
  sourceGroups: number;
  basePass: number;
  treatedPass: number;
  /** Per-task mean of treated − base. */
  delta: number;
  /** Two-sided (1 − alpha) interval of delta. */
  ci: [number, number];
  /** Which interval: "bootstrap-studentized", "score-design-effect", "exact-no-discordance" or "single-unit" (pooled rows: "seeds-t"). */
  intervalMethod: IntervalMethod | "seeds-t";
  ciMethod: string;
  /** false below MIN_RELIABLE_GROUPS units. */
  reliable: boolean;
  p: number;
  /** Which test produced p: "exact McNemar", "cluster sign-flip (exact)" or "cluster sign-flip (Monte Carlo, N)". */
  test: string;
  alpha: number;
  /** p < alpha AND the interval excludes 0. */
  significant: boolean;
  /** Cluster-robust standard error of delta. */
  se: number;
  /** Minimum detectable |delta| at `power` (two-sided alpha); null when the paired differences do not vary. */
  mde: number | null;
  mdeMethod: MdeMethod;
  power: number;
  improved: number;
  regressed: number;
  iterations: number;
  seed: number;
};

export const MDE_FORMULA =
  "MDE = (t_{1−α/2, g−1} + t_{power, g−1}) · SE, SE = √(g/(g−1) · Σ_g (s_g − Δ·n_g)²) / n over the g source groups";

/** Minimum detectable effect: (t_{1−α/2,g−1} + t_{power,g−1})·SE; t rather than z so few groups are not flattered. */
export function minimumDetectableEffect(se: number, groups: number, alpha = 0.05, power = 0.8): number | null {
  if (groups < 2 || !(se > 0)) return null;
  return (tQuantile(1 - alpha / 2, groups - 1) + tQuantile(power, groups - 1)) * se;
}

function settings(opts: CompareOptions) {
  const alpha = opts.alpha ?? 0.05;
  const power = opts.power ?? 0.8;
  if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
    throw new DomainError("BAD_REQUEST", "alpha and power must lie in (0, 1)");
  const permutations = opts.permutations ?? 20_000;
  if (!Number.isInteger(permutations) || permutations < 100)
    throw new DomainError("BAD_REQUEST", "permutations must be an integer ≥ 100");
  return {
    alpha,
    power,
    permutations,
    iterations: opts.iterations ?? 10_000,
    seed: opts.seed ?? 0,
    mde: opts.mde ?? "simulated",
  };
}

/** The clustered test: exact McNemar when every group is one task with 0/1 outcomes (it equals the sign-flip test there), else the sign-flip test. */
export function clusteredTest(c: Clusters, permutations: number, seed: number): { p: number; test: string } {
  if (c.binary && c.groups === c.n) return { p: mcnemarExact(c.improved, c.regressed), test: "exact McNemar" };
  const r = signFlipTest(c.sums, { permutations, seed: deriveSeed(seed, 2) });
  return { p: r.p, test: r.test };
}

/** The decision rule: the clustered test, the interval, and significant = p < α AND the interval excludes 0. */
function decide(c: Clusters, alpha: number, iterations: number, permutations: number, seed: number) {
  const interval = pairedInterval(c, 1 - alpha, iterations, deriveSeed(seed, 1));
  const { p, test } = clusteredTest(c, permutations, seed);
  const ci = interval.ci;
  return { interval, p, test, ci, significant: p < alpha && (ci[0] > 0 || ci[1] < 0) };
}

function mdeOf(c: Clusters, se: number, s: ReturnType<typeof settings>): { mde: number | null; mdeMethod: MdeMethod } {
  const formula = minimumDetectableEffect(se, c.groups, s.alpha, s.power);
  if (s.mde === "approximate" || !c.binary || c.n === 0) return { mde: formula, mdeMethod: "approximate" };
  const m = MDE_SIMULATION;
  const mde = simulatedMde(
    fitDiscordance(c),
    (sim, rep) => {
      // The same rule as decide(), with the interval skipped when the test alone already says no.
      const seed = deriveSeed(s.seed, 100 + rep);
      if (clusteredTest(sim, m.permutations, seed).p >= s.alpha) return false;
      const ci = pairedInterval(sim, 1 - s.alpha, m.iterations, deriveSeed(seed, 1)).ci;
      return ci[0] > 0 || ci[1] < 0;
    },
    { reps: m.reps, steps: m.steps, power: s.power, seed: deriveSeed(s.seed, 4), hint: formula && 3 * formula },
  );
  return { mde, mdeMethod: "simulated" };
}

export function compareClusters(c: Clusters, opts: CompareOptions = {}): PairedComparison {
  const s = settings(opts);
  const delta = c.n ? (c.treatedSum - c.baseSum) / c.n : 0;
  const { interval, p, test, ci, significant } = decide(c, s.alpha, s.iterations, s.permutations, s.seed);
  const se = clusterSe(c.sums, c.counts);
  return {
    n: c.n,
    groups: c.groups,
    unit: c.unit,
    units: c.groups,
    sourceGroups: c.sourceGroups,
    basePass: c.n ? c.baseSum / c.n : 0,
    treatedPass: c.n ? c.treatedSum / c.n : 0,
    delta,
    ci,
    intervalMethod: interval.intervalMethod,
    ciMethod: interval.ciMethod,
    reliable: c.groups >= MIN_RELIABLE_GROUPS,
    p,
    test,
    alpha: s.alpha,
    significant,
    se,
    ...mdeOf(c, se, s),
    power: s.power,
    improved: c.improved,
    regressed: c.regressed,
    iterations: s.iterations,
    seed: s.seed,
  };
}

/** Paired outcomes (0/1 or pass rates in [0, 1]) of one comparison, clustered by `group`. */
export const comparePaired = (pairs: readonly PairedInput[], opts: CompareOptions = {}): PairedComparison =>
  compareClusters(clusterPairs(pairs), opts);

/** "significant at α=0.05" or "not significant at α=0.05 (…)", with what the design could detect. */
export function significanceLabel(r: PairedComparison): string {
  const pp = (x: number) => `${(100 * x).toFixed(1)} pp`;
  if (r.significant)
    return `significant at α=${r.alpha} (${r.test} p=${r.p.toPrecision(3)}; ${100 * (1 - r.alpha)}% interval excludes 0)`;
  const why =
    r.p >= r.alpha
      ? `${r.test} p=${r.p.toPrecision(3)}`
      : `${r.test} p=${r.p.toPrecision(3)} but the ${100 * (1 - r.alpha)}% interval includes 0`;
  const mde =
    r.mde === null
      ? "no variation in paired differences, so no detectable effect can be stated"
      : r.mde >= 1
        ? `with ${r.units} ${r.unit === "cluster" ? "clusters" : "source groups"} no effect within ±100 pp is detectable at ${100 * r.power}% power`
        : `this test could detect only |Δ| ≥ ${pp(r.mde)} at ${100 * r.power}% power`;
  return `not significant at α=${r.alpha} (${why}; ${mde})`;
}
