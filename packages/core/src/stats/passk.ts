import { DomainError } from "../errors";

// Multi-sample evaluation: n answers per task, c of them correct. pass@k is the chance
// that at least one of k answers drawn without replacement from the n is correct; averaged over
// tasks it is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models
// Trained on Code", eq. 1): 1 − C(n−c, k) / C(n, k).

/** One task's samples: how many answers were graded and how many of them passed. */
export type SampleCount = { samples: number; correct: number };

function checkCount(s: SampleCount): void {
  if (!Number.isInteger(s.samples) || !Number.isInteger(s.correct) || s.samples < 1 || s.correct < 0)
    throw new DomainError("BAD_REQUEST", `sample counts must be integers with samples ≥ 1 (got ${JSON.stringify(s)})`);
  if (s.correct > s.samples)
    throw new DomainError("BAD_REQUEST", `correct (${s.correct}) exceeds samples (${s.samples})`);
}

/**
 * Unbiased pass@k of one task. C(n−c, k)/C(n, k) is computed as the product Π_{i=n−c+1..n} (1 − k/i)
 * (the numerically stable form of the paper's reference code): no factorials, no overflow at n = 1000.
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCount({ samples: n, correct: c });
  if (!Number.isInteger(k) || k < 1 || k > n)
    throw new DomainError("BAD_REQUEST", `pass@k needs an integer 1 ≤ k ≤ n (k = ${k}, n = ${n})`);
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** The k reported for n samples per task: 1, 5 and 10 where n allows. */
export const REPORTED_KS = [1, 5, 10] as const;
export const reportedKs = (n: number): number[] => REPORTED_KS.filter((k) => k <= n);

export type PassAtK = { k: number; value: number; tasks: number };

/**
 * Mean pass@k over tasks for every reported k that every task's sample count allows (a task whose
 * other answers never got a verdict has fewer samples; k never exceeds the smallest count).
 * pass@1 is then the mean over tasks of each task's pass rate c/n.
 */
export function passAtKRows(tasks: readonly SampleCount[]): PassAtK[] {
  if (tasks.length === 0) return [];
  for (const t of tasks) checkCount(t);
  const minN = Math.min(...tasks.map((t) => t.samples));
  return reportedKs(minN).map((k) => ({
    k,
    value: tasks.reduce((s, t) => s + passAtK(t.samples, t.correct, k), 0) / tasks.length,
    tasks: tasks.length,
  }));
}

/** A task's pass rate c/n: the paired quantity of a multi-sample comparison. */
export const passRateOf = (s: SampleCount): number => {
  checkCount(s);
  return s.correct / s.samples;
};
