import {
  getExperiment,
  listStages,
  listStudyArms,
  recordStudyTestClaim,
  studyOfExperiment,
  type StageRow,
  type StudyRow,
} from "@agentlab/db";
import {
  DomainError,
  ExperimentConfig,
  canonicalJson,
  isDomainError,
  modelLabel,
  sha256Hex,
  stagePlan,
  type ModelRef,
} from "@agentlab/core";
import type { Services } from "../services";
import type { StageCtx } from "../experiments/stages/context";
import { testModels } from "../experiments/stages/select";
import { endStudyOnStoppedArm } from "./settle";

// The study's hold on its arms' test evaluation (brief §11): an arm never claims the split's test
// set on its own. Its test stage waits until every arm's dev selection is frozen; then the first
// arm to get there makes the study's ONE claim (one ledger row naming every arm's test models,
// each arm's models fixed on its row) and wakes the others, which evaluate exactly those models.
// It runs inside the experiment runner, so on the leader.

export type TestHold = null | "waiting" | { models: ModelRef[] };

/** The context the arm's own test stage would get: its recipe, plan entry and stage rows. */
async function armContext(services: Services, experimentId: string): Promise<StageCtx | null> {
  const exp = await getExperiment(services.db, experimentId);
  if (!exp || exp.state !== "running") return null;
  const config = ExperimentConfig.parse(exp.config);
  const stage = stagePlan(config).find((s) => s.kind === "test_eval");
  const rows = new Map<string, StageRow>((await listStages(services.db, experimentId)).map((r) => [r.key, r]));
  const row = stage && rows.get(stage.key);
  if (!stage || !row || rows.get("select")?.state !== "succeeded") return null;
  return { services, experimentId, config, stage, row, rows };
}

/** When every arm's selection is frozen: the claim. False while some arm is still selecting (or stopped). */
async function claimForStudy(services: Services, study: StudyRow): Promise<boolean> {
  const studyId = study.id;
  const arms = await listStudyArms(services.db, studyId);
  const claims: { name: string; models: ModelRef[]; labels: string[] }[] = [];
  for (const a of arms) {
    const ctx = await armContext(services, a.experimentId);
    if (!ctx) return false;
    const models = await testModels(ctx);
    claims.push({ name: a.name, models, labels: models.map(modelLabel) });
  }
  // The study's recipe identity for the ledger: its definition except the name (as recipeHash does for one experiment).
  const { name: _name, ...recipe } = study.definition;
  const recipeHash = sha256Hex(canonicalJson(recipe));
  await services.db
    .transaction((tx) => recordStudyTestClaim(tx, { studyId, recipeHash, arms: claims }))
    .catch((err: unknown) => {
      // Another arm's runner claimed at the same moment: its claim stands, and this arm follows it.
      if (!(isDomainError(err) && err.code === "CONFLICT")) throw err;
    });
  for (const a of arms) await services.queue.wakeExperiment(a.experimentId);
  return true;
}

/**
 * null: not a study arm (the experiment claims for itself). "waiting": its study has not claimed
 * yet (the stage stays running). Otherwise the models the study's claim fixed for this arm.
 */
export async function studyTestHold(c: StageCtx): Promise<TestHold> {
  let of = await studyOfExperiment(c.services.db, c.experimentId);
  if (!of) return null;
  // A study that lost an arm ends here for the arms still waiting: each fails naming that arm.
  const study = await endStudyOnStoppedArm(c.services.db, of.study);
  if (study.state === "failed")
    throw new DomainError("PRECONDITION_FAILED", `study "${study.name}" ended: ${study.error ?? "it failed"}`);
  if (!of.study.testClaimId) {
    if (!(await claimForStudy(c.services, of.study))) return "waiting";
    of = await studyOfExperiment(c.services.db, c.experimentId);
  }
  const models = of?.arm.testModels;
  if (!of?.study.testClaimId || !models)
    throw new DomainError("INTERNAL", `study "${of?.study.name}" claimed its test set without this arm's models`);
  return { models };
}
