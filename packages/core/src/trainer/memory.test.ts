import { describe, expect, it } from "vitest";
import type { ModelShape } from "./inspect";
import {
  CUDA_CONTEXT_MB,
  estimateGenerateMemory,
  estimateTrainMemory,
  loraParameters,
  memoryRefusal,
  trainFitHint,
  type TrainRecipe,
} from "./memory";

// Shapes from the public configs of Qwen2.5-1.5B and Llama-3-70B.
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
const llama70: ModelShape = {
  parameters: 70_553_706_496,
  layers: 80,
  hiddenSize: 8192,
  intermediateSize: 28_672,
  heads: 64,
  kvHeads: 8,
  headDim: 128,
  vocabSize: 128_256,
  tiedEmbeddings: false,
};
const ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
const recipe = (over: Partial<TrainRecipe> = {}): TrainRecipe => ({
  method: "qlora-nf4",
  loraRank: 16,
  loraTargets: ALL,
  batchSize: 4,
  seqLength: 2048,
  gradientCheckpointing: true,
  loss: { kind: "supervised" },
  ...over,
});

describe("estimateTrainMemory", () => {
  it("grows with batch size and with sequence length, for every method and loss", () => {
    for (const method of ["qlora-nf4", "lora-bf16", "lora-fp32"] as const)
      for (const loss of [{ kind: "full" }, { kind: "supervised" }, { kind: "chunked", chunkTokens: 1024 }] as const)
        for (const gradientCheckpointing of [true, false]) {
          const at = (batchSize: number, seqLength: number) =>
            estimateTrainMemory(qwen15, recipe({ method, loss, gradientCheckpointing, batchSize, seqLength })).totalMb;
          expect(at(2, 1024)).toBeLessThan(at(4, 1024));
          expect(at(4, 1024)).toBeLessThan(at(8, 1024));
          expect(at(4, 512)).toBeLessThan(at(4, 1024));
          expect(at(4, 1024)).toBeLessThan(at(4, 4096));
        }
  });

  it("counts LoRA parameters as r × (in + out) per projection and layer", () => {
    // q: 1536→1536, v: 1536→256 at r = 8, 28 layers
    expect(loraParameters(qwen15, 8, ["q_proj", "v_proj"])).toBe(28 * 8 * (1536 + 1536 + 1536 + 256));
    expect(loraParameters(qwen15, 8, ["lm_head"])).toBe(8 * (1536 + 151_936));
    expect(() => loraParameters(qwen15, 8, ["mlp"])).toThrow(/LoRA target "mlp" is not a module/);
  });

  it("prices the weights by method: fp32 4 bytes, bf16 2, NF4 about half a byte for the decoder's linears", () => {
    const w = (method: TrainRecipe["method"]) => estimateTrainMemory(qwen15, recipe({ method })).parts.weights ?? 0;
    expect(w("lora-fp32")).toBe(Math.ceil((qwen15.parameters * 4) / 2 ** 20));
    expect(w("lora-bf16")).toBe(Math.ceil((qwen15.parameters * 2) / 2 ** 20));
    expect(w("qlora-nf4")).toBeLessThan(w("lora-bf16"));
  });

  it("charges full-vocabulary logits: ≈ 4.6 GiB per fp32 copy at 4 × 2048 × 151,936 (Qwen2.5's vocabulary)", () => {
    const full = estimateTrainMemory(qwen15, recipe({ loss: { kind: "full" } })).parts.logits ?? 0;
    const chunked = estimateTrainMemory(qwen15, recipe({ loss: { kind: "chunked", chunkTokens: 1024 } })).parts.logits;
    const oneCopy = (4 * 2048 * 151_936 * 4) / 2 ** 20;
    expect(full).toBeGreaterThanOrEqual(2 * oneCopy);
    expect(chunked).toBeLessThanOrEqual(Math.ceil(full / 8)); // 1024 of 8192 positions
  });

  it("gradient checkpointing saves activations", () => {
    const on = estimateTrainMemory(qwen15, recipe({ gradientCheckpointing: true })).parts.activations ?? 0;
    const off = estimateTrainMemory(qwen15, recipe({ gradientCheckpointing: false })).parts.activations ?? 0;
    expect(on * 4).toBeLessThan(off);
  });

  it("refuses an impossible recipe with its numbers, and accepts one that fits (positive control)", () => {
    const big = recipe({ method: "lora-fp32", gradientCheckpointing: false, loss: { kind: "full" } });
    const e = estimateTrainMemory(llama70, big);
    const refusal = memoryRefusal(e, 24_576, trainFitHint(big));
    expect(refusal).toMatch(/^needs ≈ \d+\.\d GiB \(weights 262\.\d GiB, .*more than the 24\.0 GiB of the GPU/);
    expect(refusal).toMatch(/turn gradient checkpointing on.*use qlora-nf4/);
    const small = recipe({ batchSize: 1, seqLength: 1024 });
    const fits = estimateTrainMemory(qwen15, small);
    expect(memoryRefusal(fits, 24_576, trainFitHint(small))).toBeNull();
    expect(fits.totalMb).toBeGreaterThan(CUDA_CONTEXT_MB);
  });
});

describe("estimateGenerateMemory", () => {
  const g = { dtype: "bfloat16" as const, batchSize: 8, promptTokens: 1024, maxNewTokens: 512 };
  it("is weights plus a KV cache that grows with batch and length", () => {
    const e = estimateGenerateMemory(qwen15, g);
    expect(e.parts.weights).toBe(Math.ceil((qwen15.parameters * 2) / 2 ** 20));
    // 2 (k, v) × 28 layers × 2 kv heads × 128 × 2 bytes × 8 × 1536 tokens
    expect(e.parts.kv_cache).toBe(Math.ceil((2 * 28 * 2 * 128 * 2 * 8 * 1536) / 2 ** 20));
    const at = (batchSize: number, maxNewTokens: number) =>
      estimateGenerateMemory(qwen15, { ...g, batchSize, maxNewTokens }).totalMb;
    expect(at(8, 512)).toBeLessThan(at(16, 512));
    expect(at(8, 512)).toBeLessThan(at(8, 4096));
  });
  it("refuses a 70B model in bf16 on one 80 GB card", () => {
    const e = estimateGenerateMemory(llama70, g);
    expect(memoryRefusal(e, 81_559, "use a larger GPU")).toMatch(
      /more than the 79\.6 GiB of the GPU: use a larger GPU$/,
    );
  });
});
