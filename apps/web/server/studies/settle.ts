import {
  failStudy,
  getExperiment,
  getStudy,
  listStages,
  listStudyArms,
  studyOfExperiment,
  type Db,
  type StudyRow,
} from "@agentlab/db";
import type { Services } from "../services";
import { cancelExperiment } from "../experiments/service";

// A study needs every arm's dev selection and test evaluation; an arm that stops before its test
// evaluation finished (failed, canceled, its experiment gone) ends the study, which then reads as
// failed with that arm named and never gets a report: contrasts over the arms that happened to
// finish would be a different study than the one declared. An arm stopping after its test
// evaluation (its report stage, say) takes nothing from the study, so it does not end it.
//
// The test claim cannot be handed back: the ledger is append-only because a claim records that
// test answers may have been read. Before the claim nothing was read and nothing is recorded;
// after it the claim stays in the split's ledger as spent, and the study's error says which.
//
// The arms still running when their study ends are canceled at their next step (the runner asks
// stopArmOfEndedStudy first), their unfinished jobs with them: their results could serve no report,
// so they stop spending GPU time. An arm that stops wakes the others (wakeStudyArms), so this
// happens at once rather than at the runner's next sweep.

const ENDED = new Set(["failed", "canceled"]);

/** The first arm (in declaration order) that stopped before its test evaluation succeeded, and how. */
async function stoppedArm(db: Db, studyId: string): Promise<{ name: string; how: string } | null> {
  for (const a of await listStudyArms(db, studyId)) {
    const exp = await getExperiment(db, a.experimentId);
    if (!exp) return { name: a.name, how: "its experiment was deleted" };
    if (!ENDED.has(exp.state)) continue;
    const testEval = (await listStages(db, a.experimentId)).find((s) => s.key === "test_eval");
    if (testEval?.state === "succeeded") continue;
    return { name: a.name, how: `${exp.state}${exp.error ? ` (${exp.error})` : ""}` };
  }
  return null;
}

const claimNote = (study: StudyRow) =>
  study.testClaimId
    ? "its one test claim stays in the split's ledger as spent (the arms' test answers may have been read)"
    : "the test set was never claimed";

/**
 * A running study with an arm stopped before its test evaluation becomes failed, naming the arm
 * and what became of the test claim. Returns the study as it is now (unchanged when no arm stopped).
 */
export async function endStudyOnStoppedArm(db: Db, study: StudyRow): Promise<StudyRow> {
  if (study.state !== "running" || study.report) return study;
  const arm = await stoppedArm(db, study.id);
  if (!arm) return study;
  await failStudy(
    db,
    study.id,
    `arm "${arm.name}" ${arm.how} before its test evaluation finished; the study ends without a report, and ${claimNote(study)}`,
  );
  return (await getStudy(db, study.id)) ?? study;
}

/**
 * A running arm of a study that has ended (or ends now: an arm stopped before its test
 * evaluation) is canceled with its unfinished jobs, naming the study and why. True when it was.
 */
export async function stopArmOfEndedStudy(
  services: Pick<Services, "db" | "queue">,
  experimentId: string,
): Promise<boolean> {
  const of = await studyOfExperiment(services.db, experimentId);
  if (!of) return false;
  const study = await endStudyOnStoppedArm(services.db, of.study);
  if (study.state !== "failed") return false;
  await cancelExperiment(services, experimentId, `study "${study.name}" ended: ${study.error ?? "it failed"}`);
  return true;
}

/** Wakes the other arms of the experiment's study (none for a stand-alone experiment). */
export async function wakeStudyArms(services: Pick<Services, "db" | "queue">, experimentId: string): Promise<void> {
  const of = await studyOfExperiment(services.db, experimentId);
  if (!of) return;
  for (const a of await listStudyArms(services.db, of.study.id))
    if (a.experimentId !== experimentId) await services.queue.wakeExperiment(a.experimentId);
}
