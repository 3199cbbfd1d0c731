import { z } from "zod";
import { GradeVerdict, type TestOutcome } from "../grading/schemas";
import { type DpoPairLine, type DpoPairScore, PromptMessage } from "../trainer/dpo";

// Preference pairs from execution. Pure: the stages gather graded answers, this decides
// which pairs exist. chosen = a verified passing answer (teacher or reference), rejected = a failing
// answer of the current policy for the same prompt (or a killed mutant of the reference). The labels
// come from the grader only: a verdict of pass, or a model failure; an infra_error is neither.

/**
 * on_policy: a passing sample of the start policy itself (the on-policy same-prompt source);
 * episode: an episode's continuation from a stored state (the episode_branch source), on either side.
 */
export const ChosenSource = z.enum(["teacher", "reference", "on_policy", "episode"]);
export type ChosenSource = z.infer<typeof ChosenSource>;
/** buggy: the task's own buggy main file; mutant: a mutant of the reference the admission audit saw killed. */
export const RejectedSource = z.enum(["on_policy", "mutant", "buggy", "episode"]);
export type RejectedSource = z.infer<typeof RejectedSource>;

/**
 * Where a pair comes from. cross_state: a verified answer against the start policy's failing sample
 * (the original source); near_miss: a verified answer against the buggy file or a killed mutant of
 * the reference (the rejected answer is one bug away from a repair); on_policy: a passing against a
 * failing sample of the start policy on the same prompt (both answers on-policy); episode_branch: a
 * passing against a failing continuation of an episode from the same stored state (prompt = the
 * transcript to that state). New sources go last: the pairs stage builds them in this order.
 */
export const PairSource = z.enum(["cross_state", "near_miss", "on_policy", "episode_branch"]);
export type PairSource = z.infer<typeof PairSource>;

/** Where a failing answer failed first: the grader's layers, named from its verdict. */
export const FailingLayer = z.enum(["syntax", "public", "hidden", "limits", "tampered"]);
export type FailingLayer = z.infer<typeof FailingLayer>;

const LAYER_OF: Partial<Record<GradeVerdict, FailingLayer>> = {
  fail_syntax: "syntax",
  fail_public: "public",
  fail_hidden: "hidden",
  timeout: "limits",
  resource_limit: "limits",
  tampered: "tampered",
};

/** The failing layer of a verdict; null for pass and infra_error (not a model failure). */
export function failingLayer(verdict: GradeVerdict): FailingLayer | null {
  return LAYER_OF[verdict] ?? null;
}

export type ChosenAnswer = {
  taskId: string;
  source: Exclude<ChosenSource, "on_policy" | "episode">;
  text: string;
  verdict: GradeVerdict;
};
export type RejectedAnswer = {
  taskId: string;
  source: RejectedSource;
  /** The policy that wrote it (a model key: base, an SFT epoch) and which of its samples. */
  modelKey: string;
  sample: number;
  text: string;
  verdict: GradeVerdict;
  tests: readonly TestOutcome[];
  /** The failed test ids when only those were kept (an audit's killed mutant); else read from `tests`. */
  failedTestIds?: readonly string[];
};

export const PreferencePair = z.strictObject({
  /** Stable within a round: task, rejected model and sample. */
  pairKey: z.string().min(1),
  taskId: z.string().min(1),
  pairSource: PairSource,
  prompt: z.array(PromptMessage).min(1),
  chosenSource: ChosenSource,
  chosenText: z.string().min(1),
  rejectedSource: RejectedSource,
  rejectedModelKey: z.string().min(1),
  rejectedSample: z.number().int().min(0),
  rejectedText: z.string().min(1),
  rejectedVerdict: GradeVerdict,
  failingLayer: FailingLayer,
  /** The ids of the tests the rejected answer failed (with errors counted as failures). */
  failingTests: z.array(z.string()),
  weight: z.number().positive(),
  /** episode_branch only: the state both continuations resumed (its content hash) and the two continuations. */
  stateHash: z.string().min(1).optional(),
  chosenEpisodeId: z.string().uuid().optional(),
  rejectedEpisodeId: z.string().uuid().optional(),
});
export type PreferencePair = z.infer<typeof PreferencePair>;

export type PairSkip = {
  taskId: string;
  reason:
    | "chosen_not_passing"
    | "rejected_not_failing"
    | "no_chosen"
    | "no_prompt"
    | "duplicate"
    | "same_text"
    | "task_cap";
  detail: string;
};

/**
 * Pairs each failing answer of a task with that task's first passing answer (teacher before
 * reference, then input order), for the task's one prompt. Answers whose label does not hold
 * (a chosen that did not pass, a rejected that did not fail as a model) are skipped and named,
 * as are repeats of the same rejected text and a rejected text equal to the chosen one.
 */
export function buildPairs(input: {
  prompts: ReadonlyMap<string, readonly PromptMessage[]>;
  chosen: readonly ChosenAnswer[];
  rejected: readonly RejectedAnswer[];
  /** cross_state (default, the stored key format) or near_miss (the rejected answers are the buggy file and killed mutants). */
  pairSource?: "cross_state" | "near_miss";
  /** The most pairs per task, in input order (absent: every one). */
  maxPerTask?: number;
}): { pairs: PreferencePair[]; skipped: PairSkip[] } {
  const pairSource = input.pairSource ?? "cross_state";
  const perTask = new Map<string, number>();
  const skipped: PairSkip[] = [];
  const best = new Map<string, ChosenAnswer>();
  for (const c of input.chosen) {
    if (c.verdict !== "pass") {
      skipped.push({
        taskId: c.taskId,
        reason: "chosen_not_passing",
        detail: `${c.source} answer graded ${c.verdict}`,
      });
      continue;
    }
    const held = best.get(c.taskId);
    if (!held || (held.source === "reference" && c.source === "teacher")) best.set(c.taskId, c);
  }
  const pairs: PreferencePair[] = [];
  const seen = new Set<string>();
  for (const r of input.rejected) {
    const layer = failingLayer(r.verdict);
    const where = `${r.modelKey}#${r.sample}`;
    if (!layer) {
      skipped.push({ taskId: r.taskId, reason: "rejected_not_failing", detail: `${where} graded ${r.verdict}` });
      continue;
    }
    const chosen = best.get(r.taskId);
    const prompt = input.prompts.get(r.taskId);
    if (!chosen) {
      skipped.push({ taskId: r.taskId, reason: "no_chosen", detail: `${where}: no passing answer for the task` });
      continue;
    }
    if (!prompt || prompt.length === 0) {
      skipped.push({ taskId: r.taskId, reason: "no_prompt", detail: `${where}: the task has no prompt` });
      continue;
    }
    if (r.text === chosen.text) {
      skipped.push({ taskId: r.taskId, reason: "same_text", detail: `${where} equals the chosen answer` });
      continue;
    }
    const textKey = `${r.taskId}\u0000${r.text}`;
    if (seen.has(textKey)) {
      skipped.push({ taskId: r.taskId, reason: "duplicate", detail: `${where} repeats an earlier rejected answer` });
      continue;
    }
    seen.add(textKey);
    const n = perTask.get(r.taskId) ?? 0;
    if (input.maxPerTask !== undefined && n >= input.maxPerTask) {
      skipped.push({ taskId: r.taskId, reason: "task_cap", detail: `${where}: the task has ${n} pairs already` });
      continue;
    }
    perTask.set(r.taskId, n + 1);
    pairs.push({
      // Cross-state keys keep their stored format; other sources are prefixed, so no two sources share a key.
      pairKey:
        pairSource === "cross_state"
          ? `${r.taskId}:${r.modelKey}:${r.sample}`
          : `${r.taskId}:${pairSource}:${r.modelKey}:${r.sample}`,
      taskId: r.taskId,
      pairSource,
      prompt: [...prompt],
      chosenSource: chosen.source,
      chosenText: chosen.text,
      rejectedSource: r.source,
      rejectedModelKey: r.modelKey,
      rejectedSample: r.sample,
      rejectedText: r.text,
      rejectedVerdict: r.verdict,
      failingLayer: layer,
      failingTests: r.failedTestIds
        ? [...r.failedTestIds]
        : r.tests.filter((t) => t.outcome === "failed" || t.outcome === "error").map((t) => t.id),
      weight: 1,
    });
  }
  return { pairs, skipped };
}

/**
 * The start policy's margin (log-prob chosen − rejected) of each pair is recorded, but by default it
 * filters nothing: the reference is the start policy, so at step 1 every pair's loss is log 2 and
 * its gradient weight ½ whatever its margin (a "pair already preferred" is not a solved pair; a
 * filter on it dropped 125 of 145 pairs for nothing). drop / downweight stay as an explicit opt-in
 * (recipes stored with them keep their meaning); `off` keeps every pair.
 */
export const MarginFilter = z.strictObject({
  /** With drop or downweight: a pair whose start margin exceeds this is left out or down-weighted. */
  threshold: z.number().default(0),
  /** off: keep every pair; drop: leave it out; downweight: keep it with its weight multiplied by `factor`. */
  mode: z.enum(["off", "drop", "downweight"]).default("off"),
  factor: z.number().gt(0).lt(1).default(0.25),
});
export type MarginFilter = z.infer<typeof MarginFilter>;

export type ScoredPair = PreferencePair & { marginBefore: number };

/**
 * Joins the policy's margins to the pairs and applies the filter. Every pair must have exactly one
 * score (a missing or unknown one is an error, never a silent drop); the counts say what happened.
 */
export function applyMarginFilter(
  pairs: readonly PreferencePair[],
  scores: readonly DpoPairScore[],
  filter: MarginFilter,
): { kept: ScoredPair[]; dropped: ScoredPair[]; counts: { kept: number; dropped: number; downweighted: number } } {
  const byKey = new Map(scores.map((s) => [s.pair_id, s]));
  const known = new Set(pairs.map((p) => p.pairKey));
  const stray = scores.filter((s) => !known.has(s.pair_id)).map((s) => s.pair_id);
  if (stray.length) throw new Error(`margin scores for unknown pairs: ${stray.slice(0, 5).join(", ")}`);
  const kept: ScoredPair[] = [];
  const dropped: ScoredPair[] = [];
  let downweighted = 0;
  for (const p of pairs) {
    const s = byKey.get(p.pairKey);
    if (!s) throw new Error(`pair ${p.pairKey} has no margin score`);
    const scored = { ...p, marginBefore: s.margin };
    if (filter.mode === "off" || s.margin <= filter.threshold) kept.push(scored);
    else if (filter.mode === "drop") dropped.push(scored);
    else {
      kept.push({ ...scored, weight: p.weight * filter.factor });
      downweighted += 1;
    }
  }
  return { kept, dropped, counts: { kept: kept.length, dropped: dropped.length, downweighted } };
}

/** The trainer's pairs JSONL (DpoPairLine per line), in the given order. */
export function pairsJsonl(pairs: readonly PreferencePair[]): string {
  const line = (p: PreferencePair): DpoPairLine => ({
    pair_id: p.pairKey,
    prompt: p.prompt,
    chosen: p.chosenText,
    rejected: p.rejectedText,
    weight: p.weight,
  });
  return pairs.map((p) => `${JSON.stringify(line(p))}\n`).join("");
}
