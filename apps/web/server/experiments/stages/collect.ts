import {
  collectionVerdictCounts,
  getCollection,
  getDataset,
  getReplay,
  listCollections,
  listDatasets,
  listReplays,
  type CollectionRow,
} from "@agentlab/db";
import { CollectionInput, derivedName, DomainError, type StageOutputs } from "@agentlab/core";
import { createCollection } from "../../teacher/collections";
import { startCollection } from "../../teacher/collection-runs";
import { enqueueCollectionGrading, syncGrades } from "../../teacher/grading";
import { createDataset, startReplay, syncReplay } from "../../teacher/datasets";
import { ownOutput, recordedOutput, type StageCtx, type StageResult } from "./context";

// The data stages when the experiment builds its own SFT data with the teacher module:
// collect (a collection of the split's train tasks: SFT data is train-only, dev serves selection
// only and needs no teacher data) → verify (grading of its candidates, a
// snapshot of the passing ones, and a replay of that snapshot) → dataset (the replay's survivors).
// Each step first looks for what an earlier run of the same stage already made (by experiment id),
// so a restarted runner continues instead of collecting or snapshotting twice.

const PARTS = ["train"] as const;

const summary = (col: CollectionRow) => ({
  collectionId: col.id,
  collectionState: col.state,
  stopReason: col.stopReason,
  provider: col.providerKind,
  model: col.model,
  tasks: col.tasksTotal,
  samplesTotal: col.samplesTotal,
  samplesDone: col.samplesDone,
  samplesFailed: col.samplesFailed,
  reusedCandidates: col.reused,
  costUsd: col.costUsd,
  costSavedUsd: col.costSavedUsd,
  tokensIn: col.tokensIn,
  tokensOut: col.tokensOut,
});

async function experimentCollection(c: StageCtx): Promise<CollectionRow | undefined> {
  const out = recordedOutput(c, "collect", "collect");
  const recorded = out && "collectionId" in out ? out.collectionId : undefined;
  if (recorded) return getCollection(c.services.db, recorded);
  const [existing] = await listCollections(c.services.db, { experimentId: c.experimentId, limit: 1 });
  return existing;
}

/** The experiment's teacher recipe as a collection of the split's train tasks (the dataset layer and the database refuse others). */
function createExperimentCollection(c: StageCtx): Promise<CollectionRow> {
  const recipe = c.config.teacher;
  return createCollection(
    c.services,
    CollectionInput.parse({
      name: derivedName(c.config.name, `: train n=${recipe.n}`),
      experimentId: c.experimentId,
      splitId: c.config.splitId,
      providerId: recipe.providerId,
      parts: [...PARTS],
      nSamples: recipe.n,
      params: recipe.sampling,
      concurrency: 4,
      budgetUsd: recipe.budgetUsd ?? undefined,
      maxRetries: 3,
      timeoutMs: 120_000,
      grade: true,
    }),
    null,
  );
}

export async function collectStage(c: StageCtx): Promise<StageResult<"collect">> {
  const col = (await experimentCollection(c)) ?? (await createExperimentCollection(c));
  if (col.state === "failed" || col.state === "canceled")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the teacher collection ${col.state}: ${col.stopReason ?? "no reason given"}`,
    );
  if (col.state === "queued" || col.state === "running") {
    // Joins the live run, or resumes one that a server restart interrupted (the runner skips finished items).
    void startCollection(c.services, col.id);
    return { state: "running", output: summary(col) };
  }
  return { state: "succeeded", output: summary(col) };
}

/** What an earlier step of verify recorded (nothing when the recipe reused a snapshot). */
function verifyProgress(out: StageOutputs["verify"] | undefined) {
  return out && "collectionId" in out ? out : undefined;
}

export async function verifyStage(c: StageCtx): Promise<StageResult<"verify">> {
  const { db } = c.services;
  const col = await experimentCollection(c);
  if (!col) throw new DomainError("PRECONDITION_FAILED", "no teacher collection recorded by the collect stage");
  // The teacher's background loop is not necessarily running in this process; syncing here is idempotent.
  await syncGrades(c.services);
  const prev = verifyProgress(ownOutput(c, "verify"));
  const fresh = (await getCollection(db, col.id)) ?? col;
  const verdicts = await collectionVerdictCounts(db, col.id);
  const pending =
    fresh.state === "grading"
      ? 1
      : fresh.state === "stopped_budget"
        ? await enqueueCollectionGrading(c.services, col.id)
        : 0;
  if (pending > 0) return { state: "running", output: { ...summary(fresh), verdicts, grading: true } };

  let draftId =
    prev?.draftDatasetId ??
    (await listDatasets(db, { experimentId: c.experimentId })).find((d) => d.parentId === null)?.id;
  if (!draftId) {
    const ds = await createDataset(c.services, {
      name: derivedName(c.config.name, ": verified teacher data"),
      splitId: c.config.splitId,
      collectionIds: [col.id],
      experimentId: c.experimentId,
    });
    draftId = ds.id;
  }
  let replayId = prev?.replayId ?? (await listReplays(db, draftId))[0]?.id;
  if (!replayId) replayId = (await startReplay(c.services, draftId)).id;
  const replay = await syncReplay(c.services, replayId);
  const base = { ...summary(fresh), verdicts, draftDatasetId: draftId, replayId };
  if (!replay || replay.state === "grading")
    return { state: "running", output: base, jobIds: replay ? Object.values(replay.jobs) : [] };
  if (replay.state === "failed" || !replay.resultDatasetId)
    throw new DomainError("PRECONDITION_FAILED", "the replay of the teacher data kept no sample");
  return {
    state: "succeeded",
    output: { ...base, kept: replay.kept, dropped: replay.dropped ?? [], resultDatasetId: replay.resultDatasetId },
    jobIds: Object.values(replay.jobs),
  };
}

/** The replay's surviving snapshot, with where its data came from and what it cost. */
export async function teacherDataset(c: StageCtx) {
  const verify = verifyProgress(recordedOutput(c, "verify", "verify"));
  if (!verify?.resultDatasetId)
    throw new DomainError("PRECONDITION_FAILED", "no verified SFT snapshot recorded by the verify stage");
  const ds = await getDataset(c.services.db, verify.resultDatasetId);
  if (!ds) throw new DomainError("NOT_FOUND", "the verified SFT snapshot is gone");
  const col = verify.collectionId ? await getCollection(c.services.db, verify.collectionId) : undefined;
  const replay = verify.replayId ? await getReplay(c.services.db, verify.replayId) : undefined;
  return {
    ds,
    provenance: {
      collectionId: col?.id ?? null,
      draftDatasetId: verify.draftDatasetId ?? null,
      replayId: replay?.id ?? null,
      replayDropped: replay?.dropped?.length ?? 0,
      reusedCandidates: col?.reused ?? 0,
      costUsd: col?.costUsd ?? 0,
      costSavedUsd: col?.costSavedUsd ?? 0,
      oracleSamples: ds.oracleSamples,
    },
  };
}
