import { datasetSamplesPage, getDataset } from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import type { StageCtx, StageResult } from "./stages";
import { splitTasks } from "./tasks";

// collect → verify → dataset. An experiment may name an existing verified SFT snapshot of its split
// (config.datasetId) and then reuses it. Building a new one needs the teacher collection runner
// (apps/web/server/teacher); until that is wired in, these stages fail and say so rather than
// inventing data.

const NOT_AVAILABLE =
  "not available: the teacher collection runner (apps/web/server/teacher) is not wired into experiments in this build; " +
  "create the experiment with an existing SFT dataset snapshot of this split (datasetId)";

export async function datasetStage(c: StageCtx): Promise<StageResult> {
  const datasetId = c.config.datasetId;
  if (!datasetId) throw new DomainError("PRECONDITION_FAILED", NOT_AVAILABLE);
  if (c.stage.kind !== "dataset") return { state: "succeeded", output: { reusedDatasetId: datasetId } };
  const ds = await getDataset(c.services.db, datasetId);
  if (!ds) throw new DomainError("NOT_FOUND", `no SFT dataset ${datasetId}`);
  if (ds.splitId !== c.config.splitId) throw new DomainError("PRECONDITION_FAILED", "the SFT dataset was built from another split");
  // Test tasks must never reach training data (brief §2); the dataset query layer refuses them, this re-checks.
  const test = new Set((await splitTasks(c.services.db, c.config.splitId, "test")).map((t) => t.id));
  const keys = await sampleTaskKeys(c, datasetId);
  const leaked = [...keys].filter((k) => test.has(k));
  if (leaked.length) throw new DomainError("PRECONDITION_FAILED", `the SFT dataset contains test tasks: ${leaked.slice(0, 5).join(", ")}`);
  return { state: "succeeded", output: { datasetId: ds.id, datasetHash: ds.hash, samples: ds.sampleCount, tasks: ds.taskCount } };
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

/** Task ids behind the experiment's SFT data, for the contamination check. */
export async function datasetTaskKeys(c: StageCtx): Promise<Set<string>> {
  const out = c.rows.get("dataset")?.output as { datasetId?: string } | undefined;
  return out?.datasetId ? sampleTaskKeys(c, out.datasetId) : new Set();
}
