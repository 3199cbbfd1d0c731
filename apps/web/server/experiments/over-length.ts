import { DomainError, isTerminal, parseJobResult, sftLine, type ExperimentConfig } from "@agentlab/core";
import { allDatasetSamples, getJob, type DatasetRow } from "@agentlab/db";
import type { Services } from "../services";
import { childSnapshot, type Built } from "../teacher/datasets";
import { enqueueTokenize, recordTokenCounts } from "../teacher/token-counts";

// Samples longer than the recipe's max length would be truncated, lose their end-of-turn
// token and make the trainer refuse the whole run, after the teacher was paid. The dataset stage
// measures every sample with the base model's tokenizer (a `tokenize` job) before any training,
// drops the long ones into a child snapshot and reports how many and which tasks.

export type OverLengthReport = {
  model: string;
  maxLength: number;
  /** The snapshot that was measured; the experiment trains on its child without the long samples. */
  measuredDatasetId: string;
  count: number;
  taskIds: string[];
  longestTokens: number | null;
};

export type LengthCheck =
  | { state: "waiting"; jobId: string }
  | { state: "done"; jobId: string; dataset: DatasetRow; overLength: OverLengthReport };

export async function dropOverLength(
  services: Services,
  ds: DatasetRow,
  config: ExperimentConfig,
): Promise<LengthCheck> {
  const model = config.baseModel.ref;
  const maxLength = config.training.maxLength;
  // Idempotent by its dedupe key: every re-entry of the stage finds the same job.
  const job = await enqueueTokenize(services, ds.id, model, maxLength);
  if (!isTerminal(job.state)) return { state: "waiting", jobId: job.id };
  const row = await getJob(services.db, job.id);
  const result = row?.state === "succeeded" ? parseJobResult("tokenize", row.result) : null;
  if (!result)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `measuring the samples with ${model}'s tokenizer failed (tokenize job ${job.id}): ${row?.error ?? row?.state ?? "no job"}`,
    );
  const summary = result.tokenize;
  // The counts (with the over-length list) stay on the measured snapshot; written once.
  await recordTokenCounts(services, ds.id, model, summary);
  const over = new Set(summary.over_length ?? lengthsOver(summary.sample_tokens, maxLength));
  const samples = await allDatasetSamples(services.db, ds.id);
  const dropped = samples.filter((r) => over.has(r.sample.ordinal));
  const longest = summary.sample_tokens?.length ? Math.max(...summary.sample_tokens) : null;
  const report: OverLengthReport = {
    model,
    maxLength,
    measuredDatasetId: ds.id,
    count: dropped.length,
    taskIds: [...new Set(dropped.map((r) => r.sample.taskKey))],
    longestTokens: longest,
  };
  if (dropped.length === 0) return { state: "done", jobId: job.id, dataset: ds, overLength: report };
  if (dropped.length === samples.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `every one of the ${samples.length} samples is longer than max length ${maxLength} with ${model}'s tokenizer (the longest has ${longest ?? "?"} tokens): raise training.maxLength`,
    );
  const kept: Built[] = samples
    .filter((r) => !over.has(r.sample.ordinal))
    .map((r) => ({ ...r.sample, line: sftLine({ messages: r.sample.messages }) }));
  // The measured snapshot less its long samples.
  const child = await childSnapshot(services, ds, ` (≤ ${maxLength} tokens)`, () => kept);
  return { state: "done", jobId: job.id, dataset: child, overLength: report };
}

const lengthsOver = (lengths: readonly number[] | undefined, max: number): number[] => {
  if (!lengths)
    throw new DomainError(
      "PRECONDITION_FAILED",
      "the agent's trainer does not report sample lengths: update the agent",
    );
  return lengths.flatMap((n, i) => (n > max ? [i] : []));
};
