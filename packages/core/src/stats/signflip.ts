import { mulberry32Uint } from "./random";

// Cluster sign-flip permutation test. Under H0 the two models are exchangeable within a source
// group, so swapping base and treated for a whole group flips the sign of its sum of differences;
// the statistic is |Σ_g s_g| (n × the per-task mean difference), compared with its distribution
// over all 2^k sign assignments of the k groups whose sum is non-zero (zero sums cannot move it).
// Flipping whole groups, not tasks, is what keeps correlated variants from looking like evidence.

export type SignFlipResult = {
  p: number;
  /** "cluster sign-flip (exact)" or "cluster sign-flip (Monte Carlo, N)". */
  test: string;
  exact: boolean;
  /** Monte-Carlo draws; null when exact. */
  permutations: number | null;
  /** Groups with a non-zero sum of differences. */
  nonZeroGroups: number;
};

export type SignFlipOptions = {
  /** Monte-Carlo draws when exact enumeration is out of reach (default 20,000). */
  permutations?: number;
  seed?: number;
  /** Enumerate all 2^k assignments up to this k (default 20) when the sums are not on a small lattice. */
  maxExactGroups?: number;
};

export const EXACT_TEST = "cluster sign-flip (exact)";
export const monteCarloTest = (n: number) => `cluster sign-flip (Monte Carlo, ${n})`;

// Lattice DP budget (k × Σ|a|·L cells): 0/1 outcomes over a few thousand tasks stay far below it.
const DP_BUDGET = 5e7;

/** The smallest L ≤ 1000 putting every |s|·L on the integers (0/1 data: 1; pass rates of m samples: m), or null. */
function lattice(a: Float64Array, k: number): { scale: number; ints: Int32Array; total: number } | null {
  for (let scale = 1; scale <= 1000; scale++) {
    let ok = true;
    for (let i = 0; i < k && ok; i++) {
      const x = (a[i] ?? 0) * scale;
      ok = Math.abs(x - Math.round(x)) <= 1e-6;
    }
    if (!ok) continue;
    const ints = new Int32Array(k);
    let total = 0;
    for (let i = 0; i < k; i++) {
      ints[i] = Math.round((a[i] ?? 0) * scale);
      total += ints[i] ?? 0;
    }
    return k * total <= DP_BUDGET ? { scale, ints, total } : null;
  }
  return null;
}

/** Exact null distribution by dynamic programming over the subset sums X = Σ_{ε=+1} a (T = 2X − A). */
function latticeP(ints: Int32Array, signs: Int8Array, total: number): number {
  let tObs = 0;
  for (let i = 0; i < ints.length; i++) tObs += (signs[i] ?? 0) * (ints[i] ?? 0);
  tObs = Math.abs(tObs);
  if (tObs === 0) return 1;
  const dp = new Float64Array(total + 1);
  dp[0] = 1;
  let reach = 0;
  for (let i = 0; i < ints.length; i++) {
    const a = ints[i] ?? 0;
    for (let x = reach + a; x >= 0; x--) dp[x] = 0.5 * ((dp[x] ?? 0) + (x >= a ? (dp[x - a] ?? 0) : 0));
    reach += a;
  }
  // |2X − A| ≥ tObs ⟺ X ≤ (A − tObs)/2 or X ≥ (A + tObs)/2; disjoint since tObs > 0.
  let p = 0;
  for (let x = 0; x <= total; x++) if (Math.abs(2 * x - total) >= tObs) p += dp[x] ?? 0;
  return Math.min(1, p);
}

/** All 2^(k−1) assignments with the first sign fixed (|T| is symmetric), one flip per step in Gray-code order. */
function enumerateP(a: Float64Array, k: number, threshold: number): number {
  const sign = new Int8Array(k).fill(1);
  let t = 0;
  for (let i = 0; i < k; i++) t += a[i] ?? 0;
  let hits = Math.abs(t) >= threshold ? 1 : 0;
  const steps = 2 ** (k - 1);
  for (let i = 1; i < steps; i++) {
    const j = 32 - Math.clz32(i & -i); // index of the flipped sign: lowest set bit + 1 (0 stays fixed)
    t -= 2 * (sign[j] ?? 0) * (a[j] ?? 0);
    sign[j] = -(sign[j] ?? 0);
    if (Math.abs(t) >= threshold) hits++;
  }
  return hits / steps;
}

function monteCarloP(a: Float64Array, k: number, threshold: number, draws: number, seed: number): number {
  // Signs come 8 at a time: per block of 8 groups a table of its 256 signed partial sums, so one
  // draw costs k/8 lookups and k/32 random words.
  const blocks = Math.ceil(k / 8);
  const table = new Float64Array(blocks * 256);
  for (let b = 0; b < blocks; b++) {
    for (let m = 0; m < 256; m++) {
      let t = 0;
      for (let j = 0; j < 8 && 8 * b + j < k; j++) t += (m >>> j) & 1 ? (a[8 * b + j] ?? 0) : -(a[8 * b + j] ?? 0);
      table[b * 256 + m] = t;
    }
  }
  const next = mulberry32Uint(seed);
  let hits = 0;
  for (let d = 0; d < draws; d++) {
    let t = 0;
    let bits = 0;
    for (let b = 0; b < blocks; b++) {
      if ((b & 3) === 0) bits = next();
      t += table[b * 256 + (bits & 255)] ?? 0;
      bits >>>= 8;
    }
    if (Math.abs(t) >= threshold) hits++;
  }
  // The observed assignment counts as one of the draws, so p is never 0 and the test stays valid.
  return (hits + 1) / (draws + 1);
}

export function signFlipTest(sums: ArrayLike<number>, opts: SignFlipOptions = {}): SignFlipResult {
  const draws = opts.permutations ?? 20_000;
  const maxExact = Math.min(opts.maxExactGroups ?? 20, 30);
  let scale = 0;
  for (let i = 0; i < sums.length; i++) scale += Math.abs(sums[i] ?? 0);
  const zero = 1e-12 * Math.max(1, scale);
  const a = new Float64Array(sums.length);
  const signs = new Int8Array(sums.length);
  let k = 0;
  let tObs = 0;
  for (let i = 0; i < sums.length; i++) {
    const s = sums[i] ?? 0;
    if (Math.abs(s) <= zero) continue;
    a[k] = Math.abs(s);
    signs[k] = s > 0 ? 1 : -1;
    tObs += s;
    k++;
  }
  const exact = (p: number): SignFlipResult => ({
    p,
    test: EXACT_TEST,
    exact: true,
    permutations: null,
    nonZeroGroups: k,
  });
  if (k === 0) return exact(1);
  const grid = lattice(a, k);
  if (grid) return exact(latticeP(grid.ints, signs.subarray(0, k), grid.total));
  // Float sums: tolerate rounding so that an assignment equal to the observed one counts as ≥.
  const threshold = Math.abs(tObs) - 1e-9 * Math.max(1, scale);
  if (k <= maxExact) return exact(enumerateP(a, k, threshold));
  return {
    p: monteCarloP(a, k, threshold, draws, opts.seed ?? 0),
    test: monteCarloTest(draws),
    exact: false,
    permutations: draws,
    nonZeroGroups: k,
  };
}
