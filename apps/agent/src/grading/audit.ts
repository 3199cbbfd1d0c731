import type { AuditResult, GradeLimits, GradeVerdict, SurvivingMutant, TaskSpec } from "@agentlab/core";
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
};

/** A verdict that shows the hidden tests catching a wrong program (not a crash of the grader). */
export const killsByTests = (v: GradeVerdict): boolean => v === "fail_hidden" || v === "fail_public" || v === "timeout";

export async function auditTask(grader: Grader, task: TaskSpec, opts: AuditOptions): Promise<AuditResult> {
  const reasons: string[] = [];
  const first = await grader.referenceIds(task, opts.limits);
  const ids = first.ids;
  const referenceVerdicts: GradeVerdict[] = [first.result.verdict];
  for (let i = 1; i < opts.referenceRuns && !referenceVerdicts.some((v) => v !== "pass"); i++) {
    referenceVerdicts.push((await grader.grade(task, task.reference, { expectedIds: ids, limits: opts.limits })).verdict);
  }
  if (referenceVerdicts.length < opts.referenceRuns || referenceVerdicts.some((v) => v !== "pass")) {
    reasons.push(`reference did not pass ${opts.referenceRuns}× in a row: ${referenceVerdicts.join(", ")} ${first.result.reasons.slice(0, 3).join("; ")}`);
  }
  const buggy = await grader.grade(task, task.files.filter((f) => f.role === "main"), { expectedIds: ids, limits: opts.limits });
  const hiddenFailed = buggy.tests.some((t) => t.layer === "hidden" && t.outcome !== "passed");
  if (!killsByTests(buggy.verdict) || !hiddenFailed) reasons.push(`buggy main file does not fail the hidden tests (verdict ${buggy.verdict})`);

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
        set.mutants.map((m) => grader.grade(task, [...others, { path: ref.path, content: m.source }], { expectedIds: ids, limits: { ...opts.limits, wallTimeoutS: 5 } })),
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
    expectedTestIds: ids,
    mutantsTotal: total,
    mutantsKilled: killed,
    mutationScore: total > 0 ? killed / total : null,
    surviving,
    unsandboxed: grader.backend !== "bwrap",
  };
}
