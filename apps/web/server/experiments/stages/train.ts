import { stageJobs } from "@agentlab/db";
import {
  DomainError,
  isTerminal,
  parseJobResult,
  trainJobPayload,
  trainJobRequirements,
  trainKey,
  type StageOutputs,
} from "@agentlab/core";
import { studySharing } from "../../studies/shared-jobs";
import { recordedOutput, type StageCtx, type StageResult } from "./context";

// `train:s<seed>`: one train job per seed, its payload mapped from the recipe in core; the stage
// output keeps the snapshots (and their archives) the evaluations load. The arms of a study share
// a train job when their payloads are identical (arms that differ only after SFT: DPO, RFT, GRPO,
// an evaluation prompt), so they start from one adapter instead of training it again per arm.

/** The snapshots the train stage of this seed recorded, with the method it trained with. */
export function trainOutput(c: StageCtx, seed: number): StageOutputs["train"] {
  return recordedOutput(c, trainKey(seed), "train") ?? {};
}

export async function trainStage(c: StageCtx): Promise<StageResult<"train">> {
  const t = c.stage.target;
  if (t?.model !== "seed") throw new Error("train stage without a seed");
  const data = recordedOutput(c, "dataset", "dataset");
  if (!data) throw new DomainError("PRECONDITION_FAILED", "no SFT dataset (id and hash) recorded by the dataset stage");
  const tc = c.config.training;
  // The agent fetches the snapshot by its hash; the dataset id stays in the stage output.
  const work = {
    payload: trainJobPayload(c.config, t.seed, { datasetHash: data.datasetHash }),
    requirements: trainJobRequirements(c.config),
  };
  const job = await c.services.queue.enqueue({
    type: "train",
    experimentId: c.experimentId,
    // The seed is in the payload, so the content alone keys a study's shared training.
    ...((await studySharing(c.services.db, c.experimentId))?.key("train", work) ?? {
      dedupeKey: `exp:${c.experimentId}:${trainKey(t.seed)}`,
    }),
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    ...work,
  });
  const [j] = await stageJobs(c.services.db, [job.id]);
  if (!j || !isTerminal(j.state)) return { state: "running", output: { jobId: job.id }, jobIds: [job.id] };
  if (j.state !== "succeeded")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `training seed ${t.seed} ${j.state}: ${j.error ?? j.terminalReason ?? "no error given"}`,
    );
  const record = parseJobResult("train", j.result);
  if (!record || record.snapshots.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `training seed ${t.seed} returned no run record with adapter snapshots`,
    );
  // Every seed trains with the method resolved at creation, so seeds differ by their seed only.
  if (tc.method && record.method !== tc.method)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `training seed ${t.seed} ran ${record.method}, the experiment resolved ${tc.method}`,
    );
  const snapshots = record.snapshots.map((s) => ({
    epoch: s.epoch,
    path: s.path,
    sha256: s.sha256,
    artifact: s.artifact,
  }));
  return { state: "succeeded", output: { jobId: job.id, snapshots, method: record.method }, jobIds: [job.id] };
}
