import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentConnected, createEnrollmentToken, enrollAgent, revokeAgent } from "@agentlab/db";
import { ExperimentConfig, type ExperimentConfigInput, type ModelShape } from "@agentlab/core";
import { largestGpuMb, refuseUnfitRecipe } from "../../apps/web/server/experiments/memory-fit";
import { resolveProtocol } from "../../apps/web/server/experiments/service";
import { createTestDatabase, type TestDb } from "./helpers/db";

// A recipe whose estimated peak memory exceeds every enrolled GPU is refused when the
// experiment is created, naming the numbers (core trainer/memory.ts); without an enrolled GPU
// agent nothing is refused (the jobs wait with their requirement). The recipe that fits is the
// positive control of the refusal.
// A training.gpus = N recipe is checked against agents with N GPUs only (its train job
// runs on one of them), refused naming training.gpus when the GPU fleet has no such agent, and an
// unset method is never resolved to lora-fp32 (CPU) for N > 1.

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
// Qwen2.5-1.5B's public config (tied head).
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
const base7b: ExperimentConfigInput = {
  name: "fit",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-7B", shape: qwen7 },
  training: { method: "lora-bf16", batchSize: 16, maxLength: 4096, gradientCheckpointing: false },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const config7b = (training: Record<string, unknown> = {}) =>
  ExperimentConfig.parse({ ...base7b, training: { ...base7b.training, ...training } });

const base15b: ExperimentConfigInput = {
  name: "multi",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "hub", ref: "Qwen/Qwen2.5-1.5B", shape: qwen15 },
  training: { method: "lora-bf16", batchSize: 8, maxLength: 2048, gradientCheckpointing: false },
  evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
};
const config15b = (training: Record<string, unknown> = {}) =>
  ExperimentConfig.parse({ ...base15b, training: { ...base15b.training, ...training } });

let t: TestDb;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function agentWithGpus(name: string, count: number, memoryMb: number) {
  const { token } = await createEnrollmentToken(t.db, { name, ttlS: 60 });
  const { agentId } = await enrollAgent(t.db, token);
  const gpus = Array.from({ length: count }, (_, i) => ({
    name: "GPU",
    memoryMb,
    uuid: `GPU-${name}-${i}`,
    driver: "550",
  }));
  await agentConnected(
    t.db,
    agentId,
    {
      agentVersion: "test",
      os: "linux",
      cpuCores: 2,
      ramMb: 8192,
      gpus,
      python: null,
      torch: null,
      cuda: gpus.length ? "12.4" : null,
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
    await expect(refuseUnfitRecipe(t.db, config7b())).resolves.toBeUndefined();
  });

  it("refuses a bf16 7B recipe at batch 16 × 4096 without checkpointing on a 24 GB GPU, naming the numbers", async () => {
    const agent = await agentWithGpus("l4", 1, 23_034);
    expect(await largestGpuMb(t.db)).toBe(23_034);
    await expect(refuseUnfitRecipe(t.db, config7b())).rejects.toThrow(
      /^training Qwen\/Qwen2\.5-7B needs ≈ .* GiB .*more than the .* GiB of the GPU: lower batch size \(16\) or max length \(4096\), turn gradient checkpointing on/,
    );
    // positive control: QLoRA at batch 1 × 1024 with checkpointing fits the same GPU
    await expect(
      refuseUnfitRecipe(
        t.db,
        config7b({ method: "qlora-nf4", batchSize: 1, maxLength: 1024, gradientCheckpointing: true }),
      ),
    ).resolves.toBeUndefined();
    // a revoked agent's GPU no longer counts
    await revokeAgent(t.db, agent);
    expect(await largestGpuMb(t.db)).toBeNull();
  });
});

describe("training.gpus at creation", () => {
  it("on a CPU-only fleet an unset method with gpus > 1 is refused naming training.gpus, not resolved to lora-fp32", async () => {
    await agentWithGpus("cpu-box", 0, 0);
    const unset = ExperimentConfig.parse({ ...base15b, evaluation: { graderVersion: "g1" }, training: { gpus: 2 } });
    await expect(resolveProtocol(t.db, unset)).rejects.toThrow(
      /^training\.gpus = 2 needs GPUs, but no enrolled agent has one, so the method would resolve to lora-fp32/,
    );
    // positive controls: one GPU resolves to the CPU method; an explicit GPU method is kept (its jobs wait for a GPU)
    const one = ExperimentConfig.parse({ ...base15b, evaluation: { graderVersion: "g1" }, training: { gpus: 1 } });
    expect((await resolveProtocol(t.db, one)).training.method).toBe("lora-fp32");
    const explicit = ExperimentConfig.parse({
      ...base15b,
      evaluation: { graderVersion: "g1" },
      training: { gpus: 2, method: "lora-bf16" },
    });
    expect((await resolveProtocol(t.db, explicit)).training).toMatchObject({ gpus: 2, method: "lora-bf16" });
    // fsdp with quantization nf4 and no method would resolve to qlora-nf4: refused naming training.parallel
    const nf4 = ExperimentConfig.parse({ ...base15b, training: { gpus: 2, quantization: "nf4", parallel: "fsdp" } });
    await expect(resolveProtocol(t.db, nf4)).rejects.toThrow(/^training\.parallel "fsdp" does not shard NF4/);
    // and no GPU agent: the fit check refuses nothing (the jobs wait with their requirement)
    await expect(refuseUnfitRecipe(t.db, config15b({ gpus: 4 }))).resolves.toBeUndefined();
  });

  it("a gpus: N recipe is fitted against agents with N GPUs only, and refused when none has N", async () => {
    const big = await agentWithGpus("one-big", 1, 81_559); // one 80 GB GPU
    const pair = await agentWithGpus("two-small", 2, 23_034); // two 24 GB GPUs
    expect(await largestGpuMb(t.db)).toBe(81_559);
    expect(await largestGpuMb(t.db, 2)).toBe(23_034); // the 80 GB box has one GPU: it cannot run 2 ranks
    expect(await largestGpuMb(t.db, 3)).toBeNull();
    // batch 8 × 2048 without checkpointing fits the 80 GB GPU alone...
    await expect(refuseUnfitRecipe(t.db, config15b())).resolves.toBeUndefined();
    // ...but 2 ranks must fit a 24 GB GPU of the two-GPU box: refused with the numbers
    await expect(refuseUnfitRecipe(t.db, config15b({ gpus: 2 }))).rejects.toThrow(
      /^training Qwen\/Qwen2\.5-1\.5B needs ≈ .* GiB .*more than the 22\.5 GiB of the GPU/,
    );
    // positive control: with checkpointing and batch 1 the 2-rank recipe fits those GPUs
    await expect(
      refuseUnfitRecipe(t.db, config15b({ gpus: 2, batchSize: 1, gradientCheckpointing: true })),
    ).resolves.toBeUndefined();
    await expect(
      refuseUnfitRecipe(t.db, config15b({ gpus: 4, batchSize: 1, gradientCheckpointing: true })),
    ).rejects.toThrow(
      "training.gpus = 4: no enrolled agent has 4 GPUs (the most on one agent is 2); lower training.gpus or enroll a larger box",
    );
    // a revoked agent's GPUs no longer count
    await revokeAgent(t.db, pair);
    expect(await largestGpuMb(t.db, 2)).toBeNull();
    await revokeAgent(t.db, big);
  });
});

describe("an sft+dpo recipe at creation", () => {
  it("refuses a DPO batch no single GPU fits even where the SFT stage fits sharded (DPO runs one process)", async () => {
    const box = await agentWithGpus("four-small", 4, 23_034); // four 24 GB GPUs
    const dpo = (batchSize: number) =>
      ExperimentConfig.parse({
        ...base7b,
        method: "sft+dpo",
        dpo: { batchSize },
        training: {
          method: "lora-bf16",
          batchSize: 1,
          maxLength: 1024,
          gradientCheckpointing: true,
          gpus: 4,
          parallel: "fsdp",
        },
      });
    // 2 × 8 sequences on the whole 7B model: more than one 24 GB GPU, though SFT's FSDP share fits
    await expect(refuseUnfitRecipe(t.db, dpo(8))).rejects.toThrow(
      /^DPO training Qwen\/Qwen2\.5-7B needs ≈ .* GiB .*more than the 22\.5 GiB of the GPU: lower dpo\.batchSize/,
    );
    // positive control: the same recipe at DPO batch 1 fits
    await expect(refuseUnfitRecipe(t.db, dpo(1))).resolves.toBeUndefined();
    await revokeAgent(t.db, box);
  });
});
