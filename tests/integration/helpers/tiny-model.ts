import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPython } from "../../../apps/agent/src/trainer/python";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** The trainer tests' base: a tiny random model (vocab 512, hidden 64) built by the real trainer CLI; returns its folder. */
export async function buildTinyModel(python: string): Promise<string> {
  const model = join(await mkdtemp(join(tmpdir(), "agentlab-tiny-")), "model");
  await runPython(
    "tiny-model",
    {
      output_dir: model,
      corpus: [join(ROOT, "apps/agent/python/tests/fixtures/corpus.py.txt")],
      vocab_size: 512,
      hidden_size: 64,
      intermediate_size: 128,
    },
    { python },
  );
  return model;
}
