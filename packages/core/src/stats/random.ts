/**
 * mulberry32: a tiny seeded 32-bit PRNG returning unsigned 32-bit integers. Intervals and
 * Monte-Carlo p-values must be reproducible from the seed stored in the report, and Math.random
 * cannot be seeded; 32 bits at a time also feed 32 sign flips per call.
 */
export function mulberry32Uint(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The same generator as floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  const next = mulberry32Uint(seed);
  return () => next() / 4294967296;
}

/** A seed for one purpose (bootstrap, permutations, …) derived from the user's seed, so the streams never coincide. */
export const deriveSeed = (seed: number, stream: number): number =>
  (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(stream + 1, 0xc2b2ae35)) >>> 0;

/** Type-7 (linear interpolation) quantile of an ascending-sorted array, as numpy's default. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(h);
  const a = sorted[lo] ?? Number.NaN;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] ?? a;
  return a + (h - lo) * (b - a);
}
