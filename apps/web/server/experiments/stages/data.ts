import { datasetSamplesPage, getDataset } from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import type { StageCtx, StageResult } from "./stages";
import { splitTasks } from "./tasks";

import { collectStage, teacherDataset, verifyStage } from "./collect";

// collect → verify → dataset. Without config.datasetId the teacher module builds the data (collect.ts);
// with it, an existing verified SFT snapshot of the split is reused and the first two stages are no-ops.

export async function datasetStage(c: StageCtx): Promise<StageResult> {
  const datasetId = c.config.datasetId;
  if (!datasetId) {
    if (c.stage.kind === "collect") return collectStage(c);
    if (c.stage.kind === "verify") return verifyStage(c);
    const { ds, provenance } = await teacherDataset(c);
    await refuseNonTrainTasks(c, ds.id);
    return { state: "succeeded", output: { datasetId: ds.id, datasetHash: ds.hash, samples: ds.sampleCount, tasks: ds.taskCount, ...provenance } };
  }
  if (c.stage.kind !== "dataset") return { state: "succeeded", output: { reusedDatasetId: datasetId } };
  const ds = await getDataset(c.services.db, datasetId);
  if (!ds) throw new DomainError("NOT_FOUND", `no SFT dataset ${datasetId}`);
  if (ds.splitId !== c.config.splitId) throw new DomainError("PRECONDITION_FAILED", "the SFT dataset was built from another split");
  await refuseNonTrainTasks(c, ds.id);
  return { state: "succeeded", output: { datasetId: ds.id, datasetHash: ds.hash, samples: ds.sampleCount, tasks: ds.taskCount, reusedDataset: true } };
}

// SFT data comes from train tasks only (issue 12); the dataset layer and the sft_samples trigger
// refuse others, this re-checks a reused snapshot against the experiment's own split.
async function refuseNonTrainTasks(c: StageCtx, datasetId: string): Promise<void> {
  const train = new Set((await splitTasks(c.services.db, c.config.splitId, "train")).map((t) => t.id));
  const keys = await sampleTaskKeys(c, datasetId);
  const leaked = [...keys].filter((k) => !train.has(k));
  if (leaked.length) throw new DomainError("PRECONDITION_FAILED", `the SFT dataset contains tasks outside the train part: ${leaked.slice(0, 5).join(", ")}`);
}

async function sampleTaskKeys(c: StageCtx, datasetId: string): Promise<Set<string>> {
  const keys = new Set<string>();
  let after: number | undefined;
  for (;;) {
    const page = await datasetSamplesPage(c.services.db, datasetId, { after, limit: 1000 });
    for (const s of page.items) keys.add(s.taskKey);
    if (page.nextCursor === null) return keys;
    after = page.nextCursor;
  }
}
