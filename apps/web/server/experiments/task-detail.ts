import { getExperiment, taskEvaluations, taskGenerations, type Db } from "@agentlab/db";
import { DomainError, GradeResult, mainPaths, parseAnswer, type CandidateFile } from "@agentlab/core";
import { splitTasks } from "./tasks";

// One task of a report, for the per-task view: the buggy main files and, for each requested model,
// its raw answer, the files parsed from it, and the stored grader output (verdict, isolation,
// per-layer test outcomes, reasons, output tails). An answer that never got a verdict is shown
// with its grade error, so an excluded pair can be inspected too.

export type TaskAnswer = {
  modelKey: string;
  /** Which of the task's answers (0 for a one-answer evaluation) and its sampling seed (null: greedy). */
  sampleIndex: number;
  seed: number | null;
  verdict: string | null;
  answer: string;
  files: CandidateFile[] | null;
  parseError: string | null;
  grade: Pick<
    GradeResult,
    | "isolation"
    | "backend"
    | "unsandboxed"
    | "reasons"
    | "tests"
    | "stdoutTail"
    | "stderrTail"
    | "candidateOutputTail"
    | "wallTimeMs"
  > | null;
  /** Why there is no verdict (the last grade error), when there is none. */
  noVerdict: string | null;
};

export async function taskDetail(
  db: Db,
  p: { experimentId: string; split: "dev" | "test"; taskId: string; modelKeys?: string[] },
) {
  const exp = await getExperiment(db, p.experimentId);
  if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
  const task = (await splitTasks(db, exp.splitId, p.split)).find((t) => t.id === p.taskId);
  if (!task) throw new DomainError("NOT_FOUND", "no such task in this split part");
  const [evals, gens] = await Promise.all([
    taskEvaluations(db, { experimentId: exp.id, split: p.split, taskId: p.taskId }),
    taskGenerations(db, { experimentId: exp.id, split: p.split, taskId: p.taskId }),
  ]);
  const wanted = (k: string) => !p.modelKeys || p.modelKeys.includes(k);
  const mains = mainPaths(task);
  const files = (text: string) => {
    const a = parseAnswer(text, mains);
    return a.ok ? { files: a.files, parseError: null } : { files: null, parseError: a.reason };
  };
  const graded = new Set(evals.map((e) => `${e.modelKey}:${e.sampleIndex}`));
  const answers: TaskAnswer[] = [
    ...evals
      .filter((e) => wanted(e.modelKey))
      .map((e) => {
        const g = GradeResult.safeParse(e.grade);
        return {
          modelKey: e.modelKey,
          sampleIndex: e.sampleIndex,
          seed: e.seed,
          verdict: e.verdict,
          answer: e.answer,
          ...files(e.answer),
          noVerdict: null,
          grade: g.success
            ? {
                isolation: g.data.isolation,
                backend: g.data.backend,
                unsandboxed: g.data.unsandboxed,
                reasons: g.data.reasons,
                tests: g.data.tests,
                stdoutTail: g.data.stdoutTail,
                stderrTail: g.data.stderrTail,
                candidateOutputTail: g.data.candidateOutputTail,
                wallTimeMs: g.data.wallTimeMs,
              }
            : null,
        };
      }),
    ...gens
      .filter((g) => !graded.has(`${g.modelKey}:${g.sampleIndex}`) && wanted(g.modelKey))
      .map((g) => ({
        modelKey: g.modelKey,
        sampleIndex: g.sampleIndex,
        seed: g.seed,
        verdict: null,
        answer: g.text,
        ...files(g.text),
        grade: null,
        noVerdict: g.gradeError ?? `grading ${g.gradeState}`,
      })),
  ];
  return {
    taskId: task.id,
    instruction: task.instruction,
    buggy: task.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content })),
    answers,
  };
}
