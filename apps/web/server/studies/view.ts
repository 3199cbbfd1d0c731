import {
  getExperiment,
  getSelection,
  getStudy,
  listStages,
  listStudyArms,
  studyTestClaim,
  type Db,
} from "@agentlab/db";
import { DomainError, ExperimentConfig, devCurveOf, planProgress, stagePlan, type StudyReport } from "@agentlab/core";
import { studyReport } from "./report";
import { endStudyOnStoppedArm } from "./settle";

// One study as every reader sees it (the study page, `agentlab studies show`, a study share link):
// its arms with their experiments' state and progress, the one test claim, and the report once
// every arm's test evaluation is done. Reading it also settles it: a study that lost an arm reads
// as failed with that arm named, whether or not a runner has looked at it since.

export async function studyView(db: Db, id: string) {
  const found = await getStudy(db, id);
  if (!found) throw new DomainError("NOT_FOUND", "no such study");
  const study = await endStudyOnStoppedArm(db, found);
  const arms = await Promise.all(
    (await listStudyArms(db, study.id)).map(async (a) => {
      const exp = await getExperiment(db, a.experimentId);
      const rows = await listStages(db, a.experimentId);
      const plan = exp ? stagePlan(ExperimentConfig.parse(exp.config)) : [];
      const testEval = rows.find((r) => r.key === "test_eval");
      const selection = await getSelection(db, a.experimentId);
      return {
        name: a.name,
        role: a.role,
        factor: a.factor,
        experimentId: a.experimentId,
        state: exp?.state ?? "missing",
        error: exp?.error ?? null,
        progress: planProgress(plan, rows),
        selected: rows.find((r) => r.key === "select")?.state === "succeeded",
        waitingForStudyClaim: study.state === "running" && testEval?.state === "running" && !study.testClaimId,
        /** Dev pass@1 per epoch and seed once the arm's selection is made (dev only: no test figure). */
        devCurve: selection ? devCurveOf(selection.table) : null,
      };
    }),
  );
  const claim = study.testClaimId ? await studyTestClaim(db, study.testClaimId) : undefined;
  const report: StudyReport | null = await studyReport(db, study);
  return {
    id: study.id,
    name: study.name,
    splitId: study.splitId,
    state: report ? ("succeeded" as const) : study.state,
    /** Why a failed study ended: the arm that stopped and what became of the test claim. */
    error: study.error,
    definition: study.definition,
    createdAt: study.createdAt,
    arms,
    testClaim: claim ? { id: claim.id, claimedAt: claim.claimedAt, models: claim.models } : null,
    report,
  };
}

export type StudyView = Awaited<ReturnType<typeof studyView>>;

/**
 * What a share link shows of a study: its arms' names, roles, factors, states and dev curves, the
 * claim and the report (as its JSON export has it); not the definition, which holds the teacher provider's
 * and datasets' ids and the base model's local path, nor the arms' errors (a
 * job's message may name a local path): which arm stopped shows in the arms' states.
 */
export function shareableStudy(v: StudyView) {
  return {
    name: v.name,
    state: v.state,
    createdAt: v.createdAt,
    arms: v.arms.map((a) => ({ name: a.name, role: a.role, factor: a.factor, state: a.state, devCurve: a.devCurve })),
    testClaim: v.testClaim ? { claimedAt: v.testClaim.claimedAt, models: v.testClaim.models } : null,
    report: v.report,
  };
}
