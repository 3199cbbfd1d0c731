import { describe, expect, it } from "vitest";
import { ExperimentConfig, type ExperimentConfigInput } from "../experiments/config";
import type { ModelShape } from "../trainer/inspect";
import { estimateGenerateMemory, estimateTrainMemory, loraParameters } from "../trainer/memory";
import { LORA_DEFAULT_TARGETS } from "../trainer/shared";
import {
  dpoJobRequirements,
  generateJobRequirements,
  generateRecipe,
  trainJobRequirements,
  trainMemoryEstimate,
  trainRecipe,
} from "./requirements";
import { trainJobPayload } from "./recipe";

// Qwen2.5-1.5B's public config; the tiny CPU model of the demo (hidden 64, 2 layers).
const qwen15: ModelShape = {
  parameters: 1_543_714_304,
  layers: 28,
  hiddenSize: 1536,
  intermediateSize: 8960,
  heads: 12,
  kvHeads: 2,
  headDim: 128,
  vocabSize: 151_936,
  tiedEmbeddings: true,
};
const tiny: ModelShape = {
  ...qwen15,
  parameters: 600_000,
  layers: 2,
  hiddenSize: 64,
  intermediateSize: 128,
  heads: 4,
  kvHeads: 2,
  headDim: 16,
  vocabSize: 4096,
};

const base: ExperimentConfigInput = {
  name: "exp",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-1.5B", shape: qwen15 },
  training: { method: "qlora-nf4", batchSize: 4, maxLength: 2048 },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const cfg = (over: Partial<ExperimentConfigInput> = {}, training: Record<string, unknown> = {}) =>
  ExperimentConfig.parse({ ...base, ...over, training: { ...base.training, ...training } });

describe("job requirements from the model shape and the recipe", () => {
  it("a GPU train job asks for one GPU with the estimate's memory", () => {
    const c = cfg();
    const r = trainJobRequirements(c);
    expect(r.gpus).toBe(1);
    expect(r.gpuMemoryMb).toBe(estimateTrainMemory(qwen15, trainRecipe(c)).totalMb);
    expect(r.gpuMemoryMb).toBeGreaterThan(2000);
    expect(r.gpuShare).toBeUndefined(); // exclusive
  });

  it("asks for more memory at a larger batch or length, and less when fewer positions are supervised", () => {
    const mem = (training: Record<string, unknown>) => trainJobRequirements(cfg({}, training)).gpuMemoryMb;
    expect(mem({ batchSize: 8 })).toBeGreaterThan(mem({ batchSize: 4 }));
    expect(mem({ maxLength: 4096 })).toBeGreaterThan(mem({ maxLength: 2048 }));
    expect(trainJobRequirements(cfg(), 100).gpuMemoryMb).toBeLessThan(trainJobRequirements(cfg()).gpuMemoryMb);
  });

  it("the tiny CPU model keeps no requirement, and a GPU method without a known shape asks for a GPU only", () => {
    const cpu = cfg(
      {
        baseModel: { source: "path", ref: "/m/tiny", shape: tiny },
        evaluation: { graderVersion: "g1", device: "cpu", dtype: "float32" },
      },
      { method: "lora-fp32" },
    );
    expect(trainJobRequirements(cpu)).toEqual({ labels: [], gpus: 0, gpuMemoryMb: 0 });
    expect(generateJobRequirements(cpu)).toEqual({ labels: [], gpus: 0, gpuMemoryMb: 0 });
    const unknown = cfg({ baseModel: { source: "hub", ref: "org/m" } });
    expect(trainJobRequirements(unknown)).toEqual({ labels: [], gpus: 1, gpuMemoryMb: 0 });
    expect(trainMemoryEstimate(unknown)).toBeNull();
  });

  it("the recipe's checkpointing switch reaches the trainer's spec and the estimate", () => {
    const auto = cfg();
    const off = cfg({}, { gradientCheckpointing: false });
    expect(trainJobPayload(auto, 1, { datasetHash: "a".repeat(64) }).spec.gradient_checkpointing).toBeNull();
    expect(trainJobPayload(off, 1, { datasetHash: "a".repeat(64) }).spec.gradient_checkpointing).toBe(false);
    expect(trainRecipe(auto).gradientCheckpointing).toBe(true);
    expect(trainRecipe(off).gradientCheckpointing).toBe(false);
    // Without checkpointing every layer keeps its activations: the GPU asked for grows.
    expect(trainJobRequirements(off).gpuMemoryMb).toBeGreaterThan(trainJobRequirements(auto).gpuMemoryMb);
  });

  it("training.gpus reaches the spec as world_size and the requirement as a GPU count, each GPU with one rank's estimate", () => {
    const one = cfg();
    const two = cfg({}, { gpus: 2 });
    expect(one.training.gpus).toBe(1); // the default: recipes stored before training.gpus existed parse unchanged
    expect(trainJobPayload(one, 1, { datasetHash: "a".repeat(64) }).spec.world_size).toBe(1);
    expect(trainJobPayload(two, 1, { datasetHash: "a".repeat(64) }).spec.world_size).toBe(2);
    const est1 = trainMemoryEstimate(one);
    const est2 = trainMemoryEstimate(two);
    // a rank is the one-GPU run plus DDP's gradient buckets (fp32, one per LoRA parameter)
    expect(est1?.parts.ddp).toBeUndefined();
    expect(est2?.parts).toEqual({
      ...est1?.parts,
      ddp: Math.ceil((loraParameters(qwen15, 16, LORA_DEFAULT_TARGETS) * 4) / 2 ** 20),
    });
    expect(trainJobRequirements(two)).toEqual({ labels: [], gpus: 2, gpuMemoryMb: est2?.totalMb });
    expect(est2?.totalMb).toBeGreaterThan(est1?.totalMb ?? Number.POSITIVE_INFINITY);
    // before the method is resolved a multi-rank run still asks for its GPUs (never a CPU agent)
    const unresolved = cfg({ baseModel: { source: "hub", ref: "org/m" } }, { method: undefined, gpus: 4 });
    expect(trainJobRequirements(unresolved)).toEqual({ labels: [], gpus: 4, gpuMemoryMb: 0 });
  });

  it("refuses training.gpus > 1 with the CPU method, naming the field, and a count outside 1..64", () => {
    const fp32 = ExperimentConfig.safeParse({ ...base, training: { method: "lora-fp32", gpus: 2 } });
    expect(fp32.success).toBe(false);
    expect(fp32.error?.issues.map((i) => i.path.join("."))).toEqual(["training.gpus"]);
    expect(ExperimentConfig.safeParse({ ...base, training: { method: "lora-fp32", gpus: 1 } }).success).toBe(true);
    for (const gpus of [0, 65, 1.5])
      expect(ExperimentConfig.safeParse({ ...base, training: { gpus } }).error?.issues[0]?.path).toEqual([
        "training",
        "gpus",
      ]);
  });

  it("a CUDA generate job asks for weights + KV cache, a little more with the adapter", () => {
    const c = cfg();
    const withAdapter = generateJobRequirements(c);
    expect(withAdapter.gpus).toBe(1);
    expect(withAdapter.gpuMemoryMb).toBe(estimateGenerateMemory(qwen15, generateRecipe(c, true)).totalMb);
    expect(generateJobRequirements(c, false).gpuMemoryMb).toBeLessThanOrEqual(withAdapter.gpuMemoryMb);
    const longer = cfg({ evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16", maxNewTokens: 4096 } });
    expect(generateJobRequirements(longer).gpuMemoryMb).toBeGreaterThan(withAdapter.gpuMemoryMb);
  });

  it("a dpo job asks for one GPU with the one-process estimate (the whole model), never FSDP's per-GPU share", () => {
    const dpo = { method: "sft+dpo" as const, dpo: { batchSize: 2 } };
    // SFT sharded over 4 GPUs: each GPU holds a quarter of the weights; DPO runs one process
    const sharded = cfg(dpo, { method: "lora-bf16", gpus: 4, parallel: "fsdp", batchSize: 8 });
    const need = dpoJobRequirements(sharded);
    expect(need.gpus).toBe(1);
    expect(need.gpuMemoryMb).toBeGreaterThan(trainJobRequirements(sharded).gpuMemoryMb);
    // the same shape trained by SFT on one GPU, at DPO's micro-batch (chosen + rejected = 2 × 2 sequences)
    const oneGpuSft = cfg({}, { method: "lora-bf16", gpus: 1, batchSize: 4 });
    expect(need.gpuMemoryMb).toBe(trainJobRequirements(oneGpuSft).gpuMemoryMb);
    expect(need.gpuMemoryMb).toBe(
      estimateTrainMemory(qwen15, { ...trainRecipe(sharded), batchSize: 4, ranks: 1, parallel: "ddp" }).totalMb,
    );
    // a larger DPO batch needs more; the CPU method needs no GPU
    const larger = cfg({ ...dpo, dpo: { batchSize: 8 } }, { method: "lora-bf16", gpus: 4, parallel: "fsdp" });
    expect(dpoJobRequirements(larger).gpuMemoryMb).toBeGreaterThan(need.gpuMemoryMb);
    expect(dpoJobRequirements(cfg(dpo, { method: "lora-fp32" }))).toEqual({ labels: [], gpus: 0, gpuMemoryMb: 0 });
  });
});
