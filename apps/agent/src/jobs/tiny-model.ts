import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { runPython } from "../trainer/python";
import { fetchBlob, trainerJob } from "./trainer-common";

// `tiny-model`: builds the tiny demo model (random weights, a tokenizer fitted on the split's train
// tasks, and for the CPU demo preset a short warm-up on train-split text) under this agent's state
// dir. The folder is named by the inputs (corpus, warm-up data, shape), and the trainer's stamp
// makes a second build with the same inputs a cache hit.
export const tinyModelJob = (graceMs: number) =>
  trainerJob("tiny-model", graceMs, async (ctx, { payload, python }) => {
    // The trainer reads a corpus file as a task pool by its suffix, any other file as text.
    const fetchAs = async (sha256: string, name: string) => {
      const file = join(ctx.workDir, name);
      await copyFile(await fetchBlob(ctx, sha256), file);
      return file;
    };
    const corpus = await fetchAs(payload.corpusSha256, "corpus.jsonl");
    const texts = await Promise.all(payload.textSha256s.map((sha, i) => fetchAs(sha, `text-${i}.txt`)));
    const warm = payload.warmup;
    const s = payload.shape;
    const name = [
      payload.corpusSha256.slice(0, 16),
      warm ? `w${warm.datasetSha256.slice(0, 12)}` : undefined,
      s.arch,
      s.vocab_size,
      s.hidden_size,
      s.num_layers,
    ]
      .filter((x) => x !== undefined)
      .join("-");
    const result = await runPython(
      "tiny-model",
      {
        ...s,
        output_dir: join(ctx.agent.stateDir, "models", `tiny-${name}`),
        corpus: [corpus, ...texts],
        train_task_ids: payload.trainTaskIds,
        ...(warm
          ? {
              warmup: {
                dataset: await fetchAs(warm.datasetSha256, "warmup.jsonl"),
                task_ids: payload.trainTaskIds,
                description: warm.description,
                steps: warm.steps,
                learning_rate: warm.learningRate,
                batch_size: warm.batchSize,
              },
            }
          : {}),
      },
      // The warm-up's steps, as a train job's progress.
      { ...python, onEvent: (ev) => ev.event === "progress" && ctx.progress({ ...ev }) },
    );
    if (!result.tiny_model) return { reason: "infra_error", error: "trainer returned no tiny-model summary" };
    return { reason: "succeeded", result: { tinyModel: result.tiny_model } };
  });
