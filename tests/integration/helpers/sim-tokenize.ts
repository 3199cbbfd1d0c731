import { allDatasetSamples, getDataset, type Db } from "@agentlab/db";
import type { TokenizeJobResult } from "@agentlab/core";

// What the simulated agent answers to a `tokenize` job: the snapshot's own counts with a length per
// sample from the test (`tokens(taskKey)`), by default one token per 4 characters of the line.

export async function simTokenize(
  db: Db,
  payload: Record<string, unknown>,
  tokens?: (taskKey: string) => number,
): Promise<TokenizeJobResult> {
  const datasetId = String(payload.datasetId);
  const ds = await getDataset(db, datasetId);
  if (!ds) throw new Error(`tokenize: no dataset ${datasetId}`);
  const rows = await allDatasetSamples(db, datasetId);
  const lengths = rows.map(
    (r) => tokens?.(r.sample.taskKey) ?? Math.ceil(JSON.stringify(r.sample.messages).length / 4),
  );
  const maxLength = typeof payload.maxLength === "number" ? payload.maxLength : null;
  const kept = lengths.map((n) => (maxLength === null ? n : Math.min(n, maxLength)));
  return {
    tokenize: {
      samples: rows.length,
      supervised_tokens: kept.reduce((a, b) => a + Math.ceil(b / 2), 0),
      total_tokens: kept.reduce((a, b) => a + b, 0),
      max_tokens: Math.max(0, ...kept),
      per_sample_supervised: kept.map((n) => Math.ceil(n / 2)),
      preflight_error: null,
      eot_token: "<|im_end|>",
      max_length: maxLength,
      dataset_sha256: ds.hash,
      chat_template_sha256: "c".repeat(64),
      sample_tokens: lengths,
      over_length: maxLength === null ? [] : lengths.flatMap((n, i) => (n > maxLength ? [i] : [])),
    },
  };
}
