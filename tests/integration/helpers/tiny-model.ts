import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPython } from "../../../apps/agent/src/trainer/python";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** The trainer tests' base: a tiny random model (vocab 512, hidden 64) built by the real trainer CLI; returns its folder. */
export async function buildTinyModel(python: string, over: Record<string, unknown> = {}): Promise<string> {
  const model = join(await mkdtemp(join(tmpdir(), "agentlab-tiny-")), "model");
  await runPython(
    "tiny-model",
    {
      output_dir: model,
      corpus: [join(ROOT, "apps/agent/python/tests/fixtures/corpus.py.txt")],
      vocab_size: 512,
      hidden_size: 64,
      intermediate_size: 128,
      ...over,
    },
    { python },
  );
  return model;
}

/** A train spec that fits the tiny model in seconds (two epochs of LoRA r 4 on q/v, one thread); `over` changes fields. */
export const tinyTrainSpec = (model: string, over: Record<string, unknown> = {}) => ({
  base_model: model,
  epochs: 2,
  batch_size: 4,
  max_length: 128,
  seed: 1,
  learning_rate: 1e-3,
  local_files_only: true,
  torch_threads: 1,
  lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj", "v_proj"] },
  ...over,
});
