import { datasetSamplesPage, getDataset, type DatasetRow } from "@agentlab/db";
import { DomainError, type StageOutputs } from "@agentlab/core";
import { splitTasks } from "../tasks";
import type { StageCtx, StageResult } from "./context";
import { teacherDataset } from "./collect";
import { dropOverLength } from "../over-length";
import { withPromptVariant } from "../prompt-variant";

// `dataset`: the SFT snapshot training uses. Without config.datasetId the teacher module built it
// (collect → verify, ./collect.ts); with it, an existing verified snapshot of the split is reused.
// A training.promptVariant other than the full context trains on a child snapshot whose prompts
// are rendered again under it (../prompt-variant.ts), measured for length like any other.

export async function datasetStage(c: StageCtx): Promise<StageResult<"dataset">> {
  const datasetId = c.config.datasetId;
  if (!datasetId) {
    const { ds, provenance } = await teacherDataset(c);
    await refuseNonTrainTasks(c, ds.id);
    return withinMaxLength(c, ds, provenance);
  }
  const ds = await getDataset(c.services.db, datasetId);
  if (!ds) throw new DomainError("NOT_FOUND", `no SFT dataset ${datasetId}`);
  if (ds.splitId !== c.config.splitId)
    throw new DomainError("PRECONDITION_FAILED", "the SFT dataset was built from another split");
  await refuseNonTrainTasks(c, ds.id);
  return withinMaxLength(c, ds, { reusedDataset: true });
}

/**
 * Before any training, the samples are measured with the base model's tokenizer; those longer than
 * the recipe's max length are dropped (into a child snapshot) and reported (./over-length.ts).
 */
async function withinMaxLength(
  c: StageCtx,
  ds: DatasetRow,
  extra: Omit<StageOutputs["dataset"], "datasetId" | "datasetHash" | "samples" | "tasks">,
): Promise<StageResult<"dataset">> {
  const shown = await withPromptVariant(c.services, ds, c.config.training.promptVariant);
  const checked = await dropOverLength(c.services, shown, c.config);
  const of = (d: DatasetRow) => ({ datasetId: d.id, datasetHash: d.hash, samples: d.sampleCount, tasks: d.taskCount });
  if (checked.state === "waiting")
    return { state: "running", output: { ...of(shown), ...extra }, jobIds: [checked.jobId] };
  return {
    state: "succeeded",
    output: { ...of(checked.dataset), ...extra, overLength: checked.overLength },
    jobIds: [checked.jobId],
  };
}

// SFT data comes from train tasks only; the dataset layer and the sft_samples trigger
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
