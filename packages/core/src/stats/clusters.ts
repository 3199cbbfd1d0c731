import { DomainError } from "../errors";

/**
 * One task's outcome under the base and the treated (fine-tuned) model: 0/1, or a pass rate in
 * [0, 1], with its source group and, where declared, the cluster (family, shape, source program)
 * that makes tasks of different groups dependent.
 */
export type PairedInput = { group: string; cluster?: string | undefined; base: number; treated: number };

/** What the inference treats as independent: declared clusters, or source groups when none is declared. */
export type InferenceUnit = "cluster" | "source_group";

/** Paired outcomes reduced to what every clustered statistic needs: per-unit sums of differences and sizes. */
export type Clusters = {
  n: number;
  /** Independent units (see `unitIndex`); every clustered statistic resamples or flips these. */
  groups: number;
  unit: InferenceUnit;
  /** Distinct source groups, whatever the unit. */
  sourceGroups: number;
  /** Σ (treated − base) over each unit's tasks, in order of the unit's first appearance. */
  sums: Float64Array;
  counts: Float64Array;
  /** The unit of each input pair (an index into `sums`). */
  unitOf: Int32Array;
  baseSum: number;
  treatedSum: number;
  /** Tasks with treated > base, and with treated < base. */
  improved: number;
  regressed: number;
  /** Σ max(d, 0) and Σ max(−d, 0) over tasks (= improved and regressed for 0/1 outcomes), and Σ d². */
  gain: number;
  loss: number;
  sumSq: number;
  /** Units holding at least one task whose outcome changed. */
  discordantUnits: number;
  /** Every outcome is exactly 0 or 1. */
  binary: boolean;
};

const isOutcome = (v: number) => Number.isFinite(v) && v >= 0 && v <= 1;

/**
 * Units are the connected sets of tasks linked by a shared cluster or a shared source group: a
 * declared cluster merges the groups it spans, and a group split over clusters still merges them,
 * because tasks of one source group are dependent whatever their cluster says.
 */
function unitsOf(pairs: readonly PairedInput[]): { unitOf: Int32Array; units: number; sourceGroups: number } {
  const parent: number[] = [];
  const node = new Map<string, number>();
  const find = (x: number): number => {
    let r = x;
    while ((parent[r] ?? r) !== r) r = parent[r] ?? r;
    while ((parent[x] ?? x) !== r) {
      const next = parent[x] ?? x;
      parent[x] = r;
      x = next;
    }
    return r;
  };
  const id = (key: string) => {
    let i = node.get(key);
    if (i === undefined) {
      i = parent.length;
      node.set(key, i);
      parent.push(i);
    }
    return i;
  };
  const groupNode = new Int32Array(pairs.length);
  let sourceGroups = 0;
  pairs.forEach((p, i) => {
    const before = parent.length;
    const g = id(`g:${p.group}`);
    if (parent.length > before) sourceGroups++;
    groupNode[i] = g;
    if (p.cluster !== undefined) {
      const a = find(g);
      const b = find(id(`c:${p.cluster}`));
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  });
  const index = new Map<number, number>();
  const unitOf = new Int32Array(pairs.length);
  for (let i = 0; i < pairs.length; i++) {
    const root = find(groupNode[i] ?? 0);
    let u = index.get(root);
    if (u === undefined) {
      u = index.size;
      index.set(root, u);
    }
    unitOf[i] = u;
  }
  return { unitOf, units: index.size, sourceGroups };
}

export function clusterPairs(pairs: readonly PairedInput[]): Clusters {
  for (const p of pairs) {
    if (!isOutcome(p.base) || !isOutcome(p.treated))
      throw new DomainError(
        "BAD_REQUEST",
        `outcomes must be numbers in [0, 1] (group ${p.group}: base ${p.base}, treated ${p.treated})`,
      );
  }
  const { unitOf, units, sourceGroups } = unitsOf(pairs);
  const sums = new Float64Array(units);
  const counts = new Float64Array(units);
  const changed = new Uint8Array(units);
  let baseSum = 0;
  let treatedSum = 0;
  let improved = 0;
  let regressed = 0;
  let gain = 0;
  let loss = 0;
  let sumSq = 0;
  let binary = true;
  pairs.forEach((p, i) => {
    const u = unitOf[i] ?? 0;
    const d = p.treated - p.base;
    sums[u] = (sums[u] ?? 0) + d;
    counts[u] = (counts[u] ?? 0) + 1;
    baseSum += p.base;
    treatedSum += p.treated;
    sumSq += d * d;
    if (d > 0) {
      improved++;
      gain += d;
      changed[u] = 1;
    } else if (d < 0) {
      regressed++;
      loss -= d;
      changed[u] = 1;
    }
    if ((p.base !== 0 && p.base !== 1) || (p.treated !== 0 && p.treated !== 1)) binary = false;
  });
  return {
    n: pairs.length,
    groups: units,
    unit: pairs.some((p) => p.cluster !== undefined) ? "cluster" : "source_group",
    sourceGroups,
    sums,
    counts,
    unitOf,
    baseSum,
    treatedSum,
    improved,
    regressed,
    gain,
    loss,
    sumSq,
    discordantUnits: changed.reduce((a, b) => a + b, 0),
    binary,
  };
}

/** The per-task mean θ = Σs / Σn over all groups, and n = Σn. */
export function clusterMean(sums: ArrayLike<number>, counts: ArrayLike<number>): { theta: number; n: number } {
  let s = 0;
  let n = 0;
  for (let i = 0; i < sums.length; i++) {
    s += sums[i] ?? 0;
    n += counts[i] ?? 0;
  }
  return { theta: n ? s / n : 0, n };
}

/**
 * Cluster-robust standard error of the per-task mean difference Σs/Σn (the ratio estimator's
 * linearisation, with the g/(g−1) small-sample factor). 0 with fewer than two groups.
 */
export function clusterSe(sums: ArrayLike<number>, counts: ArrayLike<number>): number {
  const g = sums.length;
  if (g < 2) return 0;
  const { theta, n } = clusterMean(sums, counts);
  let ss = 0;
  for (let i = 0; i < g; i++) ss += ((sums[i] ?? 0) - theta * (counts[i] ?? 0)) ** 2;
  return Math.sqrt((g / (g - 1)) * ss) / n;
}
