import { datasetSamplesPage, getDataset } from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import { splitTasks } from "../tasks";
import type { StageCtx, StageResult } from "./context";
import { teacherDataset } from "./collect";

// `dataset`: the SFT snapshot training uses. Without config.datasetId the teacher module built it
// (collect → verify, ./collect.ts); with it, an existing verified snapshot of the split is reused.

export async function datasetStage(c: StageCtx): Promise<StageResult<"dataset">> {
  const datasetId = c.config.datasetId;
  if (!datasetId) {
    const { ds, provenance } = await teacherDataset(c);
    await refuseNonTrainTasks(c, ds.id);
    return {
      state: "succeeded",
      output: { datasetId: ds.id, datasetHash: ds.hash, samples: ds.sampleCount, tasks: ds.taskCount, ...provenance },
    };
  }
  const ds = await getDataset(c.services.db, datasetId);
  if (!ds) throw new DomainError("NOT_FOUND", `no SFT dataset ${datasetId}`);
  if (ds.splitId !== c.config.splitId)
    throw new DomainError("PRECONDITION_FAILED", "the SFT dataset was built from another split");
  await refuseNonTrainTasks(c, ds.id);
  return {
    state: "succeeded",
    output: {
      datasetId: ds.id,
      datasetHash: ds.hash,
      samples: ds.sampleCount,
      tasks: ds.taskCount,
      reusedDataset: true,
    },
  };
}

// SFT data comes from train tasks only (issue 12); the dataset layer and the sft_samples trigger
// refuse others, this re-checks a reused snapshot against the experiment's own split.
async function refuseNonTrainTasks(c: StageCtx, datasetId: string): Promise<void> {
  const train = new Set((await splitTasks(c.services.db, c.config.splitId, "train")).map((t) => t.id));
  const keys = await sampleTaskKeys(c, datasetId);
  const leaked = [...keys].filter((k) => !train.has(k));
  if (leaked.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the SFT dataset contains tasks outside the train part: ${leaked.slice(0, 5).join(", ")}`,
    );
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
