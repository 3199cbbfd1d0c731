import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { runPython } from "../trainer/python";
import { fetchBlob, trainerJob } from "./trainer-common";

// `tiny-model`: builds the tiny demo model (random weights, a tokenizer fitted on the split's train
// tasks) under this agent's state dir. The folder is named by the corpus and the shape, and the
// trainer's stamp makes a second build with the same inputs a cache hit.
export const tinyModelJob = (graceMs: number) =>
  trainerJob("tiny-model", graceMs, async (ctx, { payload, python }) => {
    const blob = await fetchBlob(ctx, payload.corpusSha256);
    // The trainer reads a corpus file as a task pool by its suffix.
    const corpus = join(ctx.workDir, "corpus.jsonl");
    await copyFile(blob, corpus);
    const s = payload.shape;
    const name = [payload.corpusSha256.slice(0, 16), s.arch, s.vocab_size, s.hidden_size, s.num_layers]
      .filter((x) => x !== undefined)
      .join("-");
    const result = await runPython(
      "tiny-model",
      {
        ...s,
        output_dir: join(ctx.agent.stateDir, "models", `tiny-${name}`),
        corpus: [corpus],
        train_task_ids: payload.trainTaskIds,
      },
      python,
    );
    if (!result.tiny_model) return { reason: "infra_error", error: "trainer returned no tiny-model summary" };
    return { reason: "succeeded", result: { tinyModel: result.tiny_model } };
  });
