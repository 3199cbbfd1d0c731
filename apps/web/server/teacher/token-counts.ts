import { DomainError, TokenizeSummary, parseJobPayload, parseJobResult } from "@agentlab/core";
import { allDatasetSamples, finishedTokenizeJobs, getDataset, setDatasetTokenCounts } from "@agentlab/db";
import type { Services } from "../services";

// Supervised-token counts need the student model's tokenizer and chat template, so they are
// computed by a `tokenize` job on an agent (the trainer's tokenize command) and copied back here.

const dedupeKey = (datasetId: string, model: string, maxLength?: number) =>
  `tokenize:${datasetId}:${model}${maxLength === undefined ? "" : `:${maxLength}`}`;

/** Payload of the tokenize job: the dataset is the artifact named by its hash; `maxLength` also lists the samples longer than it. */
export async function enqueueTokenize(services: Services, datasetId: string, model: string, maxLength?: number) {
  const dataset = await getDataset(services.db, datasetId);
  if (!dataset) throw new DomainError("NOT_FOUND", "no such dataset");
  return services.queue.enqueue({
    type: "tokenize",
    payload: { datasetId, datasetSha256: dataset.hash, model, ...(maxLength === undefined ? {} : { maxLength }) },
    dedupeKey: dedupeKey(datasetId, model, maxLength),
    maxDurationS: 3600,
  });
}

/** Records counts from a TokenizeSummary after checking that it was computed over this snapshot's bytes. */
export async function recordTokenCounts(
  services: Services,
  datasetId: string,
  model: string,
  summary: unknown,
): Promise<boolean> {
  const dataset = await getDataset(services.db, datasetId);
  if (!dataset) throw new DomainError("NOT_FOUND", "no such dataset");
  const s = TokenizeSummary.parse(summary);
  if (s.dataset_sha256 !== dataset.hash)
    throw new DomainError("CONFLICT", "the tokenized file is not this dataset snapshot");
  if (s.samples !== dataset.sampleCount || s.per_sample_supervised.length !== dataset.sampleCount)
    throw new DomainError("CONFLICT", `tokenized ${s.samples} samples, the snapshot has ${dataset.sampleCount}`);
  return setDatasetTokenCounts(services.db, datasetId, {
    model,
    supervisedTokens: s.supervised_tokens,
    totalTokens: s.total_tokens,
    maxTokens: s.max_tokens,
    chatTemplateSha256: s.chat_template_sha256,
    perSample: s.per_sample_supervised,
    ...(s.sample_tokens ? { sampleTokens: s.sample_tokens } : {}),
    ...(s.max_length !== null && s.over_length ? { overLength: await overLengthTasks(services, datasetId, s) } : {}),
  });
}

/** Which tasks the samples longer than the measured max length belong to. */
async function overLengthTasks(services: Services, datasetId: string, s: TokenizeSummary) {
  const over = new Set(s.over_length ?? []);
  const rows = (await allDatasetSamples(services.db, datasetId)).filter((r) => over.has(r.sample.ordinal));
  return { maxLength: s.max_length ?? 0, count: over.size, taskIds: [...new Set(rows.map((r) => r.sample.taskKey))] };
}

/** Picks up finished tokenize jobs (payload and result read with the tokenize job's contract). */
export async function syncTokenizeJobs(services: Services): Promise<void> {
  const rows = await finishedTokenizeJobs(services.db);
  for (const r of rows) {
    const payload = parseJobPayload("tokenize", r.payload);
    const result = parseJobResult("tokenize", r.result);
    if (!payload.ok || !result) {
      services.log.warn(
        { payload: payload.ok ? undefined : payload.error },
        "tokenize job whose payload or result breaks its contract: skipped",
      );
      continue;
    }
    const { datasetId, model } = payload.payload;
    await recordTokenCounts(services, datasetId, model, result.tokenize).catch((err: unknown) =>
      services.log.warn({ err, datasetId }, "tokenize result refused"),
    );
  }
}
