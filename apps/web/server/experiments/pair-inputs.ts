import { allDatasetSamples, nearMissAudits, trainAnswers, type Db } from "@agentlab/db";
import {
  GradeVerdict,
  NEAR_MISS_PAIRS_PER_TASK,
  PairSource,
  PromptMessage,
  TestOutcome,
  buildPairs,
  episodeBranchPairs,
  nearMissRejected,
  onPolicyPairs,
  publicContext,
  trainsOn,
  renderRepairPrompt,
  type ChosenAnswer,
  type PreferencePair,
  type PromptVariant,
  type PairSkip,
  type RejectedAnswer,
  type TaskSpec,
} from "@agentlab/core";
import { z } from "zod";
import { episodeBranchStates } from "./episode-pairs";

// What a round's pairs are built from, read from what the experiment stored, per pair source:
// - chosen: the verified SFT snapshot's answers (teacher, or the reference provider's), each with
//   the grader verdict its candidate got (only a pass can be chosen: core buildPairs); for
//   on_policy, the start policy's own passing samples;
// - rejected: cross_state and on_policy: the start policy's graded answers on train (the sample
//   stage), with their tests; near_miss: the buggy file and the killed mutants of each train task's
//   newest passed admission audit (core nearMissRejected);
// - episode_branch: both sides are continuations of a stored episode state on a train task, one
//   passing and one failing (./episode-pairs.ts, core episodeBranchPairs), with their own prompt
//   (the transcript to the state);
// - prompts: the train tasks' repair prompts, as the policy was asked them.
// Every task here is a train task, for every source: the snapshot is train-only (dataset layer and
// database), the sample stage only generates on the train part, the audits are read for the
// split's train part and only for `tasks`, so are the episode branches, and preference_pairs
// refuses any other (triggers).

const GradeTests = z.object({
  verdict: GradeVerdict,
  tests: z.array(TestOutcome).default([]),
  isolation: z.string().optional(),
});

export type PairInputs = { pairs: PreferencePair[]; skipped: PairSkip[]; tasksWithoutPairs: number };

export async function roundPairs(
  db: Db,
  opts: {
    experimentId: string;
    splitId: string;
    datasetId: string;
    policyKey: string;
    tasks: readonly TaskSpec[];
    sources: readonly PairSource[];
    /** The prompts training shows (the recipe's training.promptVariant). */
    promptVariant?: PromptVariant;
  },
): Promise<PairInputs> {
  const prompts = new Map(
    opts.tasks.map((t) => [
      t.id,
      PromptMessage.array().parse(renderRepairPrompt(publicContext(t, opts.promptVariant))),
    ]),
  );
  // Neither side of a pair rests on an in-process verdict (forgeable by the candidate); an
  // episode's trajectory is no single-shot answer to pair.
  const samples = (await allDatasetSamples(db, opts.datasetId)).flatMap(({ sample, candidate, task }) =>
    candidate && trainsOn(candidate.gradeResult?.isolation) && trainsOn(task.gradingIsolation)
      ? [{ sample, candidate }]
      : [],
  );
  const chosen: ChosenAnswer[] = samples.map(({ sample, candidate }) => ({
    taskId: sample.taskKey,
    source: sample.oracle ? "reference" : "teacher",
    text: sample.messages.filter((m) => m.role === "assistant").at(-1)?.content ?? "",
    // A candidate without a stored verdict was never verified: it reads as infra_error, so it is never chosen.
    verdict: GradeVerdict.safeParse(candidate.verdict).data ?? "infra_error",
  }));
  const sampled: RejectedAnswer[] = [];
  for (const a of await trainAnswers(db, { experimentId: opts.experimentId, modelKey: opts.policyKey })) {
    const grade = GradeTests.safeParse(a.grade);
    // An empty answer cannot be a training sequence; an unreadable grade has no label.
    if (!grade.success || a.answer.trim() === "" || !trainsOn(grade.data.isolation)) continue;
    sampled.push({
      taskId: a.taskId,
      source: "on_policy",
      modelKey: opts.policyKey,
      sample: a.sampleIndex,
      text: a.answer,
      // An answer that did not parse was graded as the unchanged buggy file: that is its failure.
      verdict:
        a.verdict === "no_answer" ? grade.data.verdict : (GradeVerdict.safeParse(a.verdict).data ?? "infra_error"),
      tests: grade.data.tests,
    });
  }
  const verified = chosen.filter((c) => c.text.trim() !== "");
  const pairs: PreferencePair[] = [];
  const skipped: PairSkip[] = [];
  const add = (b: { pairs: PreferencePair[]; skipped: PairSkip[] }) => {
    pairs.push(...b.pairs);
    skipped.push(...b.skipped);
  };
  // One fixed order whatever the recipe lists, so the same sources always build the same JSONL.
  const sources = new Set(opts.sources);
  for (const source of PairSource.options.filter((s) => sources.has(s))) {
    if (source === "cross_state") add(buildPairs({ prompts, chosen: verified, rejected: sampled }));
    else if (source === "on_policy") add(onPolicyPairs({ prompts, answers: sampled }));
    else if (source === "episode_branch")
      add(episodeBranchPairs({ states: await episodeBranchStates(db, { splitId: opts.splitId, tasks: opts.tasks }) }));
    else
      add(
        buildPairs({
          prompts,
          chosen: verified,
          rejected: await nearMiss(db, opts),
          pairSource: "near_miss",
          maxPerTask: NEAR_MISS_PAIRS_PER_TASK,
        }),
      );
  }
  const paired = new Set(pairs.map((p) => p.taskId));
  return { pairs, skipped, tasksWithoutPairs: opts.tasks.filter((t) => !paired.has(t.id)).length };
}

/** The near-miss rejected answers of `tasks` (train): from audits of the split's train part, judged, not in-process. */
async function nearMiss(db: Db, opts: { splitId: string; tasks: readonly TaskSpec[] }): Promise<RejectedAnswer[]> {
  const audits = await nearMissAudits(db, { splitId: opts.splitId, part: "train" });
  return opts.tasks.flatMap((t) => {
    const a = audits.get(t.id);
    return a && trainsOn(a.isolation) ? nearMissRejected(t, a) : [];
  });
}
