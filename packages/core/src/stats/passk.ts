import { DomainError } from "../errors";

/**
 * Unbiased pass@k estimator (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), for n samples of which c
 * passed. Computed as the product 1 - Π_{i=n-c+1}^{n} (1 - k/i), which never forms the huge
 * binomials and so stays exact enough for n in the thousands.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (![n, c, k].every(Number.isInteger) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new DomainError("BAD_REQUEST", `passAtK needs integers 0 <= c <= n and 1 <= k <= n (n=${n}, c=${c}, k=${k})`);
  }
  if (n - c < k) return 1;
  let notPass = 1;
  for (let i = n - c + 1; i <= n; i++) notPass *= 1 - k / i;
  return 1 - notPass;
}

/** Mean pass@k over tasks, each given as its (n, c). */
export function meanPassAtK(tasks: readonly { n: number; c: number }[], k: number): number {
  if (tasks.length === 0) return 0;
  return tasks.reduce((s, t) => s + passAtK(t.n, t.c, k), 0) / tasks.length;
}
