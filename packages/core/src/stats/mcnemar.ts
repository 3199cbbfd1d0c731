import { DomainError } from "../errors";

/**
 * Exact two-sided McNemar test: under H0 each discordant pair is improved or regressed with
 * probability 1/2, so p = min(1, 2 · P[Binomial(b + c, 1/2) <= min(b, c)]). With no discordant
 * pairs there is no evidence either way and p = 1.
 */
export function mcnemarExact(improved: number, regressed: number): number {
  if (!Number.isInteger(improved) || !Number.isInteger(regressed) || improved < 0 || regressed < 0) {
    throw new DomainError("BAD_REQUEST", "mcnemarExact needs non-negative integer counts");
  }
  const n = improved + regressed;
  if (n === 0) return 1;
  const lo = Math.min(improved, regressed);
  // ln(C(n, i) / 2^n) updated term by term, so large counts neither overflow nor cost O(n²).
  let logTerm = n * Math.log(0.5);
  let tail = Math.exp(logTerm);
  for (let i = 1; i <= lo; i++) {
    logTerm += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logTerm);
  }
  return Math.min(1, 2 * tail);
}
