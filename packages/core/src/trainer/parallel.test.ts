import { describe, expect, it } from "vitest";
import { ExperimentConfig, type ExperimentConfigInput } from "../experiments/config";
import { trainJobPayload } from "../jobs/recipe";
import { trainMemoryEstimate } from "../jobs/requirements";
import type { ModelShape } from "./inspect";
import { TrainSpec } from "./schemas";

// training.parallel ("ddp" | "fsdp") from the recipe to the train spec and the estimate.
// Qwen2.5-7B's public config (untied head).
const qwen7: ModelShape = {
  parameters: 7_615_616_512,
  layers: 28,
  hiddenSize: 3584,
  intermediateSize: 18944,
  heads: 28,
  kvHeads: 4,
  headDim: 128,
  vocabSize: 152_064,
  tiedEmbeddings: false,
};
const base: ExperimentConfigInput = {
  name: "exp",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-7B", shape: qwen7 },
  training: { method: "lora-bf16", batchSize: 4, maxLength: 2048, gpus: 4 },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const cfg = (training: Record<string, unknown> = {}) =>
  ExperimentConfig.parse({ ...base, training: { ...base.training, ...training } });

describe("training.parallel", () => {
  it("defaults to ddp (stored recipes parse unchanged) and reaches the train spec", () => {
    expect(cfg().training.parallel).toBe("ddp");
    const spec = trainJobPayload(cfg({ parallel: "fsdp" }), 1, { datasetHash: "a".repeat(64) }).spec;
    expect(spec).toMatchObject({ world_size: 4, parallel: "fsdp" });
    expect(TrainSpec.parse({ base_model: "m", dataset: "d", output_dir: "o" }).parallel).toBe("ddp");
    expect(TrainSpec.safeParse({ base_model: "m", dataset: "d", output_dir: "o", parallel: "zero3" }).success).toBe(
      false,
    );
  });

  it("refuses fsdp with NF4 QLoRA, naming training.parallel (positive control: lora-bf16 and ddp pass)", () => {
    const bad = ExperimentConfig.safeParse({
      ...base,
      training: { ...base.training, method: "qlora-nf4", parallel: "fsdp" },
    });
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual(["training.parallel"]);
    expect(cfg({ method: "qlora-nf4", parallel: "ddp" }).training.parallel).toBe("ddp");
    expect(cfg({ parallel: "fsdp" }).training.parallel).toBe("fsdp");
  });

  it("an fsdp rank holds a quarter of the bf16 weights plus the gathered units, less than a ddp rank", () => {
    const ddp = trainMemoryEstimate(cfg());
    const fsdp = trainMemoryEstimate(cfg({ parallel: "fsdp" }));
    if (!ddp || !fsdp) throw new Error("the shape is known: both estimates exist");
    expect(fsdp.parts.weights).toBe(Math.ceil((qwen7.parameters * 2) / 4 / 2 ** 20));
    const root = qwen7.vocabSize * qwen7.hiddenSize * 2;
    const layer = (qwen7.parameters - root) / qwen7.layers;
    expect(fsdp.parts.gathered).toBe(Math.ceil(((root + 2 * layer) * 2) / 2 ** 20));
    expect(fsdp.parts.lora).toBe(Math.ceil((ddp.parts.lora ?? 0) / 4));
    expect(fsdp.parts.ddp).toBeUndefined();
    expect(fsdp.parts.activations).toBe(ddp.parts.activations);
    expect(fsdp.totalMb).toBeLessThan(ddp.totalMb);
    // one rank of a one-GPU fsdp recipe is the plain estimate (nothing to shard)
    expect(trainMemoryEstimate(cfg({ parallel: "fsdp", gpus: 1 }))).toEqual(trainMemoryEstimate(cfg({ gpus: 1 })));
  });
});
