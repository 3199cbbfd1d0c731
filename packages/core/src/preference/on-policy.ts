import type { PromptMessage } from "../trainer/dpo";
import { failingLayer, type PairSkip, type PreferencePair, type RejectedAnswer } from "./pairs";

// On-policy same-prompt pairs: both answers are samples of the start policy on the same train
// prompt (the sample stage, T = 1.0 by default), chosen = one that passed, rejected = one that
// failed as a model. Only tasks where the policy both passes and fails give pairs: the difference
// between the two is what the policy itself can already produce.

/** The most on-policy pairs one task gives: a task the policy samples often must not dominate the set. */
export const ON_POLICY_PAIRS_PER_TASK = 4;

/** A graded sample of the start policy (pass or fail): the sample stage's answers. */
export type SampledAnswer = Omit<RejectedAnswer, "source">;

/**
 * Per task, in sample order: the distinct passing texts and the distinct failing texts (a failing
 * text equal to a passing one is no pair); each failing answer is paired once, with the passing
 * answers in turn, up to `maxPerTask` pairs. Infra errors are neither side.
 */
export function onPolicyPairs(input: {
  prompts: ReadonlyMap<string, readonly PromptMessage[]>;
  answers: readonly SampledAnswer[];
  maxPerTask?: number;
}): { pairs: PreferencePair[]; skipped: PairSkip[] } {
  const max = input.maxPerTask ?? ON_POLICY_PAIRS_PER_TASK;
  const byTask = new Map<string, SampledAnswer[]>();
  for (const a of [...input.answers].sort((x, y) => x.sample - y.sample)) {
    const list = byTask.get(a.taskId) ?? [];
    list.push(a);
    byTask.set(a.taskId, list);
  }
  const pairs: PreferencePair[] = [];
  const skipped: PairSkip[] = [];
  for (const [taskId, answers] of [...byTask].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const passing = distinct(answers.filter((a) => a.verdict === "pass"));
    const passTexts = new Set(passing.map((a) => a.text));
    const failing = distinct(answers.filter((a) => failingLayer(a.verdict) !== null && !passTexts.has(a.text)));
    if (passing.length === 0 || failing.length === 0) continue;
    const prompt = input.prompts.get(taskId);
    if (!prompt || prompt.length === 0) {
      skipped.push({ taskId, reason: "no_prompt", detail: "on-policy pairs: the task has no prompt" });
      continue;
    }
    for (const [i, r] of failing.entries()) {
      const c = passing[i % passing.length];
      const layer = failingLayer(r.verdict);
      if (!c || !layer) continue;
      if (i >= max) {
        skipped.push({ taskId, reason: "task_cap", detail: `${r.modelKey}#${r.sample}: the task has ${max} pairs` });
        continue;
      }
      pairs.push({
        pairKey: `${taskId}:on_policy:${r.modelKey}:${c.sample}-${r.sample}`,
        taskId,
        pairSource: "on_policy",
        prompt: [...prompt],
        chosenSource: "on_policy",
        chosenText: c.text,
        rejectedSource: "on_policy",
        rejectedModelKey: r.modelKey,
        rejectedSample: r.sample,
        rejectedText: r.text,
        rejectedVerdict: r.verdict,
        failingLayer: layer,
        failingTests: r.tests.filter((t) => t.outcome === "failed" || t.outcome === "error").map((t) => t.id),
        weight: 1,
      });
    }
  }
  return { pairs, skipped };
}

/** The first answer of each distinct text, in order. */
function distinct(answers: readonly SampledAnswer[]): SampledAnswer[] {
  const seen = new Set<string>();
  return answers.filter((a) => (seen.has(a.text) ? false : (seen.add(a.text), true)));
}
