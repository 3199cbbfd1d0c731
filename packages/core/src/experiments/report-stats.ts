import { clusterPairs, type PairedInput } from "../stats/clusters";
import { rateInterval, type IntervalMethod } from "../stats/paired-interval";
import {
  comparePaired,
  MDE_FORMULA,
  significanceLabel,
  type CompareOptions,
  type PairedComparison,
} from "../stats/compare";
import { POOLING_METHOD } from "../stats/pooling";

// The report's summary rows. Dev is the selection split: the shown adapter won there, so its dev
// numbers are optimistic by construction and the row type has no p-value, interval or label.
// The test row is the report's only inference.

export type Interval = { value: number; lo: number; hi: number; intervalMethod?: IntervalMethod };

export const DEV_NOTE = "selection split: optimistic by construction";

type Counts = { n: number; improved: number; regressed: number; bothPass: number; bothFail: number };

export type DevSummaryRow = Counts & {
  split: "dev";
  /** Observed pass@1, no interval: dev chose the adapter. */
  base: number;
  sft: number | null;
  sftLabel: string | null;
  delta: number | null;
  note: typeof DEV_NOTE;
};

export type TestSummaryRow = Counts & {
  split: "test";
  base: Interval;
  /** null when no adapter result is claimed (base kept). */
  sft: Interval | null;
  sftLabel: string | null;
  /** The clustered comparison: Δ, its interval, the test and p, MDE; null when no adapter is compared. */
  stats: PairedComparison | null;
  significant: boolean;
  label: string;
};

export type SummaryRow = DevSummaryRow | TestSummaryRow;

/** What the numbers are, stored with the report so every rendering can say it. */
export const STATS_METHODS = {
  test:
    "Clustered by unit (declared clusters where tasks carry one, else source groups; tasks sharing either are one unit): exact McNemar when every unit holds one 0/1 task, else a sign-flip permutation test of per-unit sums of differences " +
    "(exact for 0/1 outcomes and pass rates of up to 1,000 samples, or up to 20 non-zero units; otherwise Monte Carlo with the +1 correction).",
  interval:
    "By the shape of the data (intervalMethod): bootstrap-studentized = studentized cluster bootstrap over units (symmetric, never narrower than the small-sample-expanded t interval) when at least 10 units changed; " +
    "score-design-effect = Tango's score interval on counts divided by the design effect when fewer changed; exact-no-discordance = ±(1 − (α/2)^(1/units)) (Clopper–Pearson) when no outcome changed; " +
    "single-unit = the whole range when every task is in one unit. Marked unreliable below 10 units.",
  significance: "Significant only when p < α AND the interval excludes 0.",
  mde:
    `mdeMethod "simulated" (0/1 outcomes): the smallest Δ at which this rule (test AND interval) is significant in 80% of draws from the fitted discordance ` +
    `(observed units, rate of change, within-unit correlation from the design effect; 120 draws per Δ, bisection). mdeMethod "approximate" (pass rates, pooled seeds): ${MDE_FORMULA}.`,
  pooling: POOLING_METHOD,
} as const;

/** A task's pass (1) or fail (0) with its source group and, where declared, its cluster. */
export type GroupOutcome = { group: string; cluster?: string | undefined; pass: number };

function counts(pairs: readonly PairedInput[]): Counts {
  const c = { n: pairs.length, improved: 0, regressed: 0, bothPass: 0, bothFail: 0 };
  for (const p of pairs) {
    if (p.treated > p.base) c.improved++;
    else if (p.treated < p.base) c.regressed++;
    else if (p.base === 1) c.bothPass++;
    else if (p.base === 0) c.bothFail++;
  }
  return c;
}

const mean = (xs: readonly GroupOutcome[]) => (xs.length ? xs.reduce((s, x) => s + x.pass, 0) / xs.length : 0);

/** One model's pass@1 with its clustered interval (bootstrap, score or exact, as for Δ). */
export function passRate(
  outcomes: readonly GroupOutcome[],
  opts: { iterations: number; seed: number; level?: number },
): Interval {
  const c = clusterPairs(outcomes.map((o) => ({ group: o.group, cluster: o.cluster, base: 0, treated: o.pass })));
  const r = rateInterval(c, opts.level ?? 0.95, opts.iterations, opts.seed);
  return { value: mean(outcomes), lo: r.ci[0], hi: r.ci[1], intervalMethod: r.intervalMethod };
}

export function devSummary(
  pairs: readonly PairedInput[] | null,
  base: readonly GroupOutcome[],
  sft: readonly GroupOutcome[] | null,
  sftLabel: string | null,
): DevSummaryRow {
  const c = pairs ? counts(pairs) : { n: base.length, improved: 0, regressed: 0, bothPass: 0, bothFail: 0 };
  const sftPass = sft ? mean(sft) : null;
  const delta = pairs && pairs.length ? pairs.reduce((s, p) => s + p.treated - p.base, 0) / pairs.length : null;
  return { split: "dev", ...c, base: mean(base), sft: sftPass, sftLabel, delta, note: DEV_NOTE };
}

export function testSummary(
  pairs: readonly PairedInput[] | null,
  base: readonly GroupOutcome[],
  sft: readonly GroupOutcome[] | null,
  sftLabel: string | null,
  opts: CompareOptions & { iterations: number; seed: number },
): TestSummaryRow {
  const level = 1 - (opts.alpha ?? 0.05);
  const baseRate = passRate(base, { ...opts, level });
  if (!pairs || !sft) {
    return {
      split: "test",
      n: base.length,
      improved: 0,
      regressed: 0,
      bothPass: 0,
      bothFail: 0,
      base: baseRate,
      sft: null,
      sftLabel,
      stats: null,
      significant: false,
      label: "no adapter compared",
    };
  }
  const stats = comparePaired(pairs, opts);
  return {
    split: "test",
    ...counts(pairs),
    base: baseRate,
    sft: passRate(sft, { ...opts, level }),
    sftLabel,
    stats,
    significant: stats.significant,
    label: significanceLabel(stats),
  };
}
