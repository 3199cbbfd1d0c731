import { z } from "zod";
import { stageJobs } from "@agentlab/db";
import {
  DomainError,
  TrainMethod,
  isTerminal,
  parseJobResult,
  trainJobPayload,
  trainJobRequirements,
} from "@agentlab/core";
import type { StageCtx, StageResult } from "./context";

// `train:s<seed>`: one train job per seed, its payload mapped from the recipe in core; the stage
// output keeps the snapshots (and their archives) the evaluations load.

// `artifact`: the archive of the snapshot in the artifact store, which any agent can fetch.
const Snapshot = z.object({
  epoch: z.number().int().min(1),
  path: z.string(),
  sha256: z.string(),
  artifact: z.string().nullable().optional(),
});
const DatasetOutput = z.object({ datasetId: z.string().uuid(), datasetHash: z.string().regex(/^[a-f0-9]{64}$/) });
const TrainOutput = z.object({
  jobId: z.string().optional(),
  snapshots: z.array(Snapshot).optional(),
  method: TrainMethod.optional(),
});

/** The snapshots the train stage of this seed recorded, with the method it trained with. */
export function trainOutput(c: StageCtx, seed: number): z.infer<typeof TrainOutput> {
  return TrainOutput.parse(c.rows.get(`train:s${seed}`)?.output ?? {});
}

export async function trainStage(c: StageCtx): Promise<StageResult> {
  const t = c.stage.target;
  if (t?.model !== "seed") throw new Error("train stage without a seed");
  const data = DatasetOutput.safeParse(c.rows.get("dataset")?.output);
  if (!data.success)
    throw new DomainError("PRECONDITION_FAILED", "no SFT dataset (id and hash) recorded by the dataset stage");
  const tc = c.config.training;
  const job = await c.services.queue.enqueue({
    type: "train",
    experimentId: c.experimentId,
    dedupeKey: `exp:${c.experimentId}:train:s${t.seed}`,
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    // The agent fetches the snapshot by its hash; the dataset id stays in the stage output.
    payload: trainJobPayload(c.config, t.seed, { datasetHash: data.data.datasetHash }),
    requirements: trainJobRequirements(c.config),
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
