import { DomainError } from "../errors";

// Holm's step-down adjustment of the primary contrasts' p-values: the family-wise error rate stays
// at α whatever the dependence between the contrasts (they share the reference arm and the test
// set), and it is uniformly more powerful than Bonferroni.

export const HOLM_METHOD =
  "Holm step-down: sort the m primary p-values ascending, p_holm(i) = max over j ≤ i of min(1, (m − j + 1)·p(j)); " +
  "a contrast is significant when p_holm < α and its (unadjusted) clustered interval excludes 0.";

/** Holm-adjusted p-values, in the order given. */
export function holmAdjust(ps: readonly number[]): number[] {
  for (const p of ps)
    if (!(Number.isFinite(p) && p >= 0 && p <= 1))
      throw new DomainError("BAD_REQUEST", `p-value ${p} is not in [0, 1]`);
  const m = ps.length;
  const order = ps.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i);
  const out = new Array<number>(m).fill(1);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    out[i] = running;
  });
  return out;
}
