import { describe, expect, it } from "vitest";
import { ExperimentConfig, type ExperimentConfigInput } from "../experiments/config";
import { trainingText } from "../experiments/report-header";
import { recipeHash } from "../experiments/test-reads";
import type { ModelShape } from "../trainer/inspect";
import { parseJobPayload } from "./contracts";
import { trainJobPayload } from "./recipe";
import { dpoJobRequirements, grpoJobRequirements, trainJobRequirements } from "./requirements";

// training.steps (length in optimizer steps, epochs = snapshots) and training.batchTokens (batches
// packed by tokens): optional recipe fields that reach the train job's spec only when set, so a
// recipe stored before them parses, hashes and pays out exactly as before.

const H = "b".repeat(64);
const shape: ModelShape = {
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
const stored: ExperimentConfigInput = {
  name: "exp",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-1.5B", shape },
  training: { method: "lora-bf16", epochs: 3, batchSize: 4, maxLength: 1024 },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const withTraining = (training: Record<string, unknown>, over: Partial<ExperimentConfigInput> = {}) =>
  ExperimentConfig.safeParse({ ...stored, ...over, training: { ...stored.training, ...training } });
const refusal = (training: Record<string, unknown>, over: Partial<ExperimentConfigInput> = {}) => {
  const r = withTraining(training, over);
  return r.success ? null : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
};

describe("training.steps and training.batchTokens in the recipe", () => {
  it("accepts both, and a stored recipe gains neither key (so its hash is unchanged)", () => {
    const c = withTraining({ steps: 120, batchTokens: 4096 });
    expect(c.success && c.data.training).toMatchObject({ steps: 120, batchTokens: 4096, epochs: 3 });
    const plain = ExperimentConfig.parse(stored);
    expect("steps" in plain.training || "batchTokens" in plain.training).toBe(false);
    const set = withTraining({ steps: 120 });
    expect(set.success && recipeHash(set.data)).not.toBe(recipeHash(plain)); // control: the hash sees the field
  });

  it("refuses bad values naming the field; positive controls pass", () => {
    expect(refusal({ steps: 3 })).toBeNull(); // steps = epochs: one step per snapshot
    expect(refusal({ steps: 2 })).toMatch(/^training\.steps: training\.steps must be at least training\.epochs/);
    expect(refusal({ steps: 0 })).toMatch(/^training\.steps:/);
    expect(refusal({ steps: 1_000_001 })).toMatch(/^training\.steps:/);
    expect(refusal({ steps: 12.5 })).toMatch(/^training\.steps:/);
    expect(refusal({ batchTokens: 8 })).toBeNull();
    expect(refusal({ batchTokens: 7 })).toMatch(/^training\.batchTokens:/);
  });

  it("refuses batchTokens with several GPUs; either alone is accepted", () => {
    expect(refusal({ gpus: 2 })).toBeNull();
    expect(refusal({ gpus: 1, batchTokens: 4096 })).toBeNull();
    expect(refusal({ gpus: 2, batchTokens: 4096 })).toMatch(
      /^training\.batchTokens: training\.batchTokens needs training\.gpus = 1/,
    );
  });
});

describe("the train job's spec", () => {
  it("is the same as before for a recipe without the fields, and carries them only when set", () => {
    const plain = trainJobPayload(ExperimentConfig.parse(stored), 7, { datasetHash: H });
    expect(Object.keys(plain.spec)).not.toContain("steps");
    expect(Object.keys(plain.spec)).not.toContain("batch_tokens");
    const parsed = withTraining({ steps: 40, batchTokens: 2048 });
    if (!parsed.success) throw new Error(parsed.error.message);
    const set = trainJobPayload(parsed.data, 7, { datasetHash: H });
    expect(set.spec).toMatchObject({ steps: 40, batch_tokens: 2048, epochs: 3 });
    const { steps: _s, batch_tokens: _b, ...rest } = set.spec;
    expect({ ...set, spec: rest }).toEqual(plain);
    expect(parseJobPayload("train", set).ok).toBe(true);
    // the contract refuses what the trainer would: a token budget under 8, zero steps
    expect(parseJobPayload("train", { ...set, spec: { ...set.spec, batch_tokens: 4 } }).ok).toBe(false);
    expect(parseJobPayload("train", { ...set, spec: { ...set.spec, steps: 0 } }).ok).toBe(false);
  });

  it("sizes the train job's memory by the token budget; DPO and GRPO keep their own batches", () => {
    const mem = (training: Record<string, unknown>, over: Partial<ExperimentConfigInput> = {}) => {
      const c = withTraining(training, over);
      if (!c.success) throw new Error(c.error.message);
      return c.data;
    };
    // 4096 tokens at max length 1024 holds what 4 full samples hold
    expect(trainJobRequirements(mem({ batchTokens: 4096, batchSize: 1 })).gpuMemoryMb).toBe(
      trainJobRequirements(mem({ batchSize: 4 })).gpuMemoryMb,
    );
    expect(trainJobRequirements(mem({ batchTokens: 16_384 })).gpuMemoryMb).toBeGreaterThan(
      trainJobRequirements(mem({ batchTokens: 4096 })).gpuMemoryMb,
    );
    // a budget under max length still holds one whole sample
    expect(trainJobRequirements(mem({ batchTokens: 64, batchSize: 1 })).gpuMemoryMb).toBe(
      trainJobRequirements(mem({ batchSize: 1 })).gpuMemoryMb,
    );
    const dpo = { method: "sft+dpo" } as const;
    expect(dpoJobRequirements(mem({ batchTokens: 65_536 }, dpo))).toEqual(dpoJobRequirements(mem({}, dpo)));
    const grpo = { method: "sft+grpo" } as const;
    expect(grpoJobRequirements(mem({ batchTokens: 65_536 }, grpo))).toEqual(grpoJobRequirements(mem({}, grpo)));
  });

  it("the report header says steps and token batches when set, epochs and batch size otherwise", () => {
    const text = (training: Record<string, unknown>) => {
      const c = withTraining(training);
      if (!c.success) throw new Error(c.error.message);
      return trainingText({ ...c.data.training, seeds: [0] });
    };
    expect(text({})).toContain("3 epochs, lr");
    expect(text({})).toContain("batch 4 × accum 1");
    expect(text({ steps: 90, batchTokens: 2048 })).toContain("90 steps (3 snapshots), lr");
    expect(text({ steps: 90, batchTokens: 2048 })).toContain("batch ≤ 2048 tokens × accum 1");
  });
});
