import { allDatasetSamples, trainAnswers, type Db } from "@agentlab/db";
import {
  GradeVerdict,
  PromptMessage,
  TestOutcome,
  buildPairs,
  publicContext,
  trainsOn,
  renderRepairPrompt,
  type ChosenAnswer,
  type PreferencePair,
  type PairSkip,
  type RejectedAnswer,
  type TaskSpec,
} from "@agentlab/core";
import { z } from "zod";

// What a round's pairs are built from, read from what the experiment stored:
// - chosen: the verified SFT snapshot's answers (teacher, or the reference provider's), each with
//   the grader verdict its candidate got (only a pass can be chosen: core buildPairs);
// - rejected: the start policy's graded answers on train (the sample stage), with their tests;
// - prompts: the train tasks' repair prompts, as the policy was asked them.
// Every task here is a train task: the snapshot is train-only (dataset layer and database), the
// sample stage only generates on the train part, and preference_pairs refuses any other.

const GradeTests = z.object({
  verdict: GradeVerdict,
  tests: z.array(TestOutcome).default([]),
  isolation: z.string().optional(),
});

export type PairInputs = { pairs: PreferencePair[]; skipped: PairSkip[]; tasksWithoutPairs: number };

export async function roundPairs(
  db: Db,
  opts: { experimentId: string; datasetId: string; policyKey: string; tasks: readonly TaskSpec[] },
): Promise<PairInputs> {
  const prompts = new Map(
    opts.tasks.map((t) => [t.id, PromptMessage.array().parse(renderRepairPrompt(publicContext(t)))]),
  );
  // Neither side of a pair rests on an in-process verdict (forgeable by the candidate).
  const samples = (await allDatasetSamples(db, opts.datasetId)).filter(
    ({ candidate, task }) => trainsOn(candidate.gradeResult?.isolation) && trainsOn(task.gradingIsolation),
  );
  const chosen: ChosenAnswer[] = samples.map(({ sample, candidate }) => ({
    taskId: sample.taskKey,
    source: sample.oracle ? "reference" : "teacher",
    text: sample.messages.filter((m) => m.role === "assistant").at(-1)?.content ?? "",
    // A candidate without a stored verdict was never verified: it reads as infra_error, so it is never chosen.
    verdict: GradeVerdict.safeParse(candidate.verdict).data ?? "infra_error",
  }));
  const rejected: RejectedAnswer[] = [];
  for (const a of await trainAnswers(db, { experimentId: opts.experimentId, modelKey: opts.policyKey })) {
    const grade = GradeTests.safeParse(a.grade);
    // An empty answer cannot be a training sequence; an unreadable grade has no label.
    if (!grade.success || a.answer.trim() === "" || !trainsOn(grade.data.isolation)) continue;
    rejected.push({
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
  const built = buildPairs({ prompts, chosen: chosen.filter((c) => c.text.trim() !== ""), rejected });
  const paired = new Set(built.pairs.map((p) => p.taskId));
  return { ...built, tasksWithoutPairs: opts.tasks.filter((t) => !paired.has(t.id)).length };
}
