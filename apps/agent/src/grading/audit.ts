import type { AuditResult, CandidateFile, GradeLimits, GradeVerdict, SurvivingMutant, TaskSpec } from "@agentlab/core";
import type { Grader } from "./grader";
import type { MutationSet } from "./mutants";

// Task admission audit: the reference passes every test N times in a row (flaky screening), the
// buggy main file fails the hidden tests, and AST mutants of the reference run against the
// hidden tests give a mutation score with the surviving mutants listed.

export type AuditOptions = {
  referenceRuns: number;
  maxMutants: number;
  limits?: Partial<GradeLimits>;
  mutate: (source: string, max: number) => Promise<MutationSet>;
  signal?: AbortSignal;
};

/** A verdict that shows the hidden tests catching a wrong program (not a crash of the grader). */
export const killsByTests = (v: GradeVerdict): boolean => v === "fail_hidden" || v === "fail_public" || v === "timeout";

/**
 * The isolated judge unless the reference fails there and passes in-process: then the task's tests
 * need the candidate's objects themselves (identity, monkeypatching its module …), and the task
 * is graded in the labelled weaker mode, with the judge's failures as the recorded reason.
 */
async function chooseIsolation(
  grader: Grader,
  task: TaskSpec,
  limits: Partial<GradeLimits> | undefined,
  signal?: AbortSignal,
) {
  const judged = await grader.referenceIds(task, limits, { isolation: "judge", signal });
  if (judged.result.verdict === "pass" || judged.result.verdict === "infra_error")
    return { first: judged, isolation: "judge" as const, why: "" };
  const inProcess = await grader.referenceIds(task, limits, { isolation: "in_process", signal });
  if (inProcess.result.verdict !== "pass") return { first: judged, isolation: "judge" as const, why: "" };
  const why = `the reference fails in the isolated judge (${judged.result.verdict}: ${judged.result.reasons.slice(0, 3).join("; ")}) and passes in-process`;
  return { first: inProcess, isolation: "in_process" as const, why };
}

export async function auditTask(grader: Grader, task: TaskSpec, opts: AuditOptions): Promise<AuditResult> {
  const reasons: string[] = [];
  const { first, isolation, why } = await chooseIsolation(grader, task, opts.limits, opts.signal);
  const ids = first.ids;
  const grade = (candidate: CandidateFile[], limits = opts.limits) =>
    grader.grade(task, candidate, { expectedIds: ids, limits, isolation, signal: opts.signal });
  const referenceVerdicts: GradeVerdict[] = [first.result.verdict];
  for (let i = 1; i < opts.referenceRuns && !referenceVerdicts.some((v) => v !== "pass"); i++) {
    referenceVerdicts.push((await grade(task.reference)).verdict);
  }
  if (referenceVerdicts.length < opts.referenceRuns || referenceVerdicts.some((v) => v !== "pass")) {
    reasons.push(
      `reference did not pass ${opts.referenceRuns}× in a row: ${referenceVerdicts.join(", ")} ${first.result.reasons.slice(0, 3).join("; ")}`,
    );
  }
  const buggy = await grade(task.files.filter((f) => f.role === "main"));
  const hiddenFailed = buggy.tests.some((t) => t.layer === "hidden" && t.outcome !== "passed");
  if (!killsByTests(buggy.verdict) || !hiddenFailed)
    reasons.push(`buggy main file does not fail the hidden tests (verdict ${buggy.verdict})`);

  let total = 0;
  let killed = 0;
  const surviving: SurvivingMutant[] = [];
  // Mutants of single-main-file tasks only: a mutant replaces exactly one file.
  const refs = task.reference.filter((r) => task.files.some((f) => f.role === "main" && f.path === r.path));
  if (opts.maxMutants > 0 && reasons.length === 0) {
    for (const ref of refs) {
      const set = await opts.mutate(ref.content, Math.max(1, Math.floor(opts.maxMutants / refs.length)));
      const others = task.reference.filter((r) => r.path !== ref.path);
      const results = await Promise.all(
        set.mutants.map((m) =>
          grade([...others, { path: ref.path, content: m.source }], { ...opts.limits, wallTimeoutS: 5 }),
        ),
      );
      results.forEach((r, i) => {
        const m = set.mutants[i];
        if (!m) return;
        total++;
        if (r.verdict !== "pass") killed++;
        else surviving.push({ operator: m.operator, path: ref.path, line: m.line, description: m.description });
      });
    }
  }
  return {
    status: reasons.length === 0 ? "passed" : "failed",
    reasons,
    referenceVerdicts,
    buggyVerdict: buggy.verdict,
    buggyDetail: buggy.reasons.slice(0, 10),
    expectedTestIds: ids,
    mutantsTotal: total,
    mutantsKilled: killed,
    mutationScore: total > 0 ? killed / total : null,
    surviving,
    unsandboxed: grader.backend !== "bwrap",
    isolation,
    isolationReason: why,
  };
}
