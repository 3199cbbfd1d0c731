import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentConnected, createEnrollmentToken, enrollAgent, revokeAgent } from "@agentlab/db";
import { ExperimentConfig, type ExperimentConfigInput, type ModelShape } from "@agentlab/core";
import { largestGpuMb, refuseUnfitRecipe } from "../../apps/web/server/experiments/memory-fit";
import { createTestDatabase, type TestDb } from "./helpers/db";

// Issue 16: a recipe whose estimated peak memory exceeds every enrolled GPU is refused when the
// experiment is created, naming the numbers (core trainer/memory.ts); without an enrolled GPU
// agent nothing is refused (the jobs wait with their requirement). The recipe that fits is the
// positive control of the refusal.

// Qwen2.5-7B's public config.
const qwen7: ModelShape = {
  parameters: 7_615_616_512,
  layers: 28,
  hiddenSize: 3584,
  intermediateSize: 18_944,
  heads: 28,
  kvHeads: 4,
  headDim: 128,
  vocabSize: 152_064,
  tiedEmbeddings: false,
};
const base: ExperimentConfigInput = {
  name: "fit",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-7B", shape: qwen7 },
  training: { method: "lora-bf16", batchSize: 16, maxLength: 4096, gradientCheckpointing: false },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const config = (training: Record<string, unknown> = {}) =>
  ExperimentConfig.parse({ ...base, training: { ...base.training, ...training } });

let t: TestDb;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function agentWithGpu(name: string, memoryMb: number) {
  const { token } = await createEnrollmentToken(t.db, { name, ttlS: 60 });
  const { agentId } = await enrollAgent(t.db, token);
  await agentConnected(
    t.db,
    agentId,
    {
      agentVersion: "test",
      os: "linux",
      cpuCores: 2,
      ramMb: 8192,
      gpus: [{ name: "L4", memoryMb, uuid: `GPU-${name}`, driver: "550" }],
      python: null,
      torch: null,
      cuda: "12.4",
      sandbox: { backend: "process", selfTestPassed: false, detail: "" },
      labels: [],
      shellJobs: false,
    },
    false,
  );
  return agentId;
}

describe("creating an experiment refuses a recipe no enrolled GPU can fit", () => {
  it("refuses nothing while no GPU agent is enrolled", async () => {
    expect(await largestGpuMb(t.db)).toBeNull();
    await expect(refuseUnfitRecipe(t.db, config())).resolves.toBeUndefined();
  });

  it("refuses a bf16 7B recipe at batch 16 × 4096 without checkpointing on a 24 GB GPU, naming the numbers", async () => {
    const agent = await agentWithGpu("l4", 23_034);
    expect(await largestGpuMb(t.db)).toBe(23_034);
    await expect(refuseUnfitRecipe(t.db, config())).rejects.toThrow(
      /^training Qwen\/Qwen2\.5-7B needs ≈ .* GiB .*more than the .* GiB of the GPU: lower batch size \(16\) or max length \(4096\), turn gradient checkpointing on/,
    );
    // positive control: QLoRA at batch 1 × 1024 with checkpointing fits the same GPU
    await expect(
      refuseUnfitRecipe(
        t.db,
        config({ method: "qlora-nf4", batchSize: 1, maxLength: 1024, gradientCheckpointing: true }),
      ),
    ).resolves.toBeUndefined();
    // a revoked agent's GPU no longer counts
    await revokeAgent(t.db, agent);
    expect(await largestGpuMb(t.db)).toBeNull();
  });
});
