import type {
  AuditResult,
  CandidateFile,
  GradeLimits,
  GradeVerdict,
  KilledMutant,
  SurvivingMutant,
  TaskSpec,
} from "@agentlab/core";
import type { Grader } from "./grader";
import type { MutationSet } from "./mutants";

// Task admission audit: the reference passes every test N times in a row (flaky screening), the
// buggy main file fails the hidden tests, and AST mutants of the reference run against the
// hidden tests give a mutation score with the surviving mutants listed. It also names the dependency
// symbols the reference reads (cross-file tasks), which studies of the prompt's context select by.

export type AuditOptions = {
  referenceRuns: number;
  maxMutants: number;
  limits?: Partial<GradeLimits>;
  mutate: (source: string, max: number) => Promise<MutationSet>;
  /** The `module.NAME` dependency symbols the task's reference reads (grading/cross-file.ts). */
  crossFile: (task: TaskSpec) => Promise<string[]>;
  signal?: AbortSignal;
  /** An admin's reason for allowing in-process grading of this task; absent: the audit refuses it. */
  inProcessReason?: string;
};

const failedIds = (tests: readonly { id: string; outcome: string }[]): string[] =>
  tests.filter((t) => t.outcome === "failed" || t.outcome === "error").map((t) => t.id);

/** A verdict that shows the hidden tests catching a wrong program (not a crash of the grader). */
export const killsByTests = (v: GradeVerdict): boolean => v === "fail_hidden" || v === "fail_public" || v === "timeout";

/**
 * The isolated judge, always, unless an admin allowed the weaker mode: when the reference fails in
 * the judge and passes in-process, the task's tests need the candidate's objects themselves
 * (identity, monkeypatching its module …). Then, with an admin's reason, the task is graded in the
 * labelled in-process mode; without one the audit refuses it (`needsInProcess`), so no task is
 * ever moved to the forgeable mode because an attack or a false negative made the judge fail.
 */
async function chooseIsolation(grader: Grader, task: TaskSpec, opts: AuditOptions) {
  const { limits, signal } = opts;
  const judged = await grader.referenceIds(task, limits, { isolation: "judge", signal });
  const inJudge = { first: judged, isolation: "judge" as const, why: "", refused: "" };
  if (judged.result.verdict === "pass" || judged.result.verdict === "infra_error") return inJudge;
  const inProcess = await grader.referenceIds(task, limits, { isolation: "in_process", signal });
  if (inProcess.result.verdict !== "pass") return inJudge;
  const failures = `the reference fails in the isolated judge (${judged.result.verdict}: ${judged.result.reasons.slice(0, 3).join("; ")}) and passes in-process`;
  if (!opts.inProcessReason)
    return {
      ...inJudge,
      refused: `${failures}: refused, since in-process grading is weaker and needs an admin's mark with a reason`,
    };
  return {
    first: inProcess,
    isolation: "in_process" as const,
    why: `allowed by an admin: ${opts.inProcessReason}; ${failures}`,
    refused: "",
  };
}

export async function auditTask(grader: Grader, task: TaskSpec, opts: AuditOptions): Promise<AuditResult> {
  const reasons: string[] = [];
  const crossFile = await opts.crossFile(task);
  const { first, isolation, why, refused } = await chooseIsolation(grader, task, opts);
  if (refused) reasons.push(refused);
  const ids = first.ids;
  const budget = grader.budgetFromReference(first.result, opts.limits);
  const grade = (candidate: CandidateFile[], limits = budget) =>
    grader.grade(task, candidate, {
      expectedIds: ids,
      expectedSkips: first.skipped,
      limits,
      isolation,
      signal: opts.signal,
    });
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
  const killedMutants: KilledMutant[] = [];
  // Mutants of single-main-file tasks only: a mutant replaces exactly one file.
  const refs = task.reference.filter((r) => task.files.some((f) => f.role === "main" && f.path === r.path));
  if (opts.maxMutants > 0 && reasons.length === 0) {
    for (const ref of refs) {
      const set = await opts.mutate(ref.content, Math.max(1, Math.floor(opts.maxMutants / refs.length)));
      const others = task.reference.filter((r) => r.path !== ref.path);
      const results = await Promise.all(
        set.mutants.map((m) =>
          grade([...others, { path: ref.path, content: m.source }], {
            ...budget,
            // Mutants that loop are common: a short wall clock, unless the reference needs more.
            wallTimeoutS: Math.max(5, (3 * first.result.wallTimeMs) / 1000 + 2),
          }),
        ),
      );
      results.forEach((r, i) => {
        const m = set.mutants[i];
        if (!m) return;
        total++;
        const where = { operator: m.operator, path: ref.path, line: m.line, description: m.description };
        if (r.verdict !== "pass") {
          killed++;
          killedMutants.push({ ...where, source: m.source, verdict: r.verdict, failingTests: failedIds(r.tests) });
        } else surviving.push(where);
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
    killed: killedMutants,
    buggyFailingTests: failedIds(buggy.tests),
    unsandboxed: grader.backend !== "bwrap",
    isolation,
    isolationReason: why,
    needsInProcess: refused !== "",
    crossFile,
  };
}
