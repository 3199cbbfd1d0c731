import { z } from "zod";

// GRPO's pass-rate filter (dynamic sampling before RL, recipe grpo.dynamicSampling.passRateFilter):
// the start policy's graded train answers → the tasks whose pass rate lies strictly between 0 and
// 1. A task the start always solves or never solves gives every RL group equal rewards, so zero
// advantage: those steps would train on nothing. Pure: the stage reads the verdicts, this decides.

/** The filter's counts, recorded in the grpo_sample and grpo stage outputs and shown on the GRPO panel. */
export const GrpoPromptFilterCounts = z.object({
  /** Train tasks whose start-policy answers were graded (at least one verdict). */
  measured: z.number().int().min(0),
  allPass: z.number().int().min(0),
  allFail: z.number().int().min(0),
  /** 0 < pass rate < 1: the RL prompts. */
  kept: z.number().int().min(0),
  /** Train tasks without a single verdict (every answer infra_error or given up on): not measured, not kept. */
  unmeasured: z.number().int().min(0),
  /** Answers per task the rate was measured on (the recipe's numGenerations). */
  samples: z.number().int().min(1),
});
export type GrpoPromptFilterCounts = z.infer<typeof GrpoPromptFilterCounts>;

/** One graded train answer of the start policy. `infra_error` is no verdict about the policy. */
export type GradedTrainAnswer = { taskId: string; verdict: string };

export type GrpoPromptFilter = { kept: string[]; rates: Record<string, number>; counts: GrpoPromptFilterCounts };

export function grpoPromptFilter(
  taskIds: readonly string[],
  answers: readonly GradedTrainAnswer[],
  samples: number,
): GrpoPromptFilter {
  const tally = new Map<string, { pass: number; n: number }>();
  for (const a of answers) {
    if (a.verdict === "infra_error") continue;
    const t = tally.get(a.taskId) ?? { pass: 0, n: 0 };
    t.n += 1;
    if (a.verdict === "pass") t.pass += 1;
    tally.set(a.taskId, t);
  }
  const counts: GrpoPromptFilterCounts = { measured: 0, allPass: 0, allFail: 0, kept: 0, unmeasured: 0, samples };
  const kept: string[] = [];
  const rates: Record<string, number> = {};
  for (const id of taskIds) {
    const t = tally.get(id);
    if (!t || t.n === 0) {
      counts.unmeasured += 1;
      continue;
    }
    counts.measured += 1;
    rates[id] = t.pass / t.n;
    if (t.pass === t.n) counts.allPass += 1;
    else if (t.pass === 0) counts.allFail += 1;
    else {
      counts.kept += 1;
      kept.push(id);
    }
  }
  return { kept, rates, counts };
}
