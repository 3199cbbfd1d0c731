import {
  DomainError,
  Capabilities,
  dpoMemoryEstimate,
  dpoRecipeOf,
  generateMemoryEstimate,
  memoryRefusal,
  trainFitHint,
  trainMemoryEstimate,
  trainRecipe,
  trainsOnGpu,
  type ExperimentConfig,
} from "@agentlab/core";
import { listAgents, type Db } from "@agentlab/db";

// A recipe whose estimated peak memory (core trainer/memory.ts, from the inspected model
// shape) exceeds every enrolled GPU is refused when the experiment is created, with the numbers,
// instead of queueing jobs no agent will ever claim. Without enrolled GPU agents nothing is refused
// here: the jobs wait with their requirement ("why is it stuck" names it). A training.gpus = N
// recipe trains on one agent with N GPUs: only such agents count for its train jobs,
// and a GPU fleet without one refuses it, naming training.gpus.

/**
 * The largest per-GPU memory an enrolled agent with at least `minGpus` GPUs offers (the claim
 * compares with an agent's smallest GPU); null when no such agent is enrolled.
 */
export async function largestGpuMb(db: Db, minGpus = 1): Promise<number | null> {
  let best: number | null = null;
  for (const a of await listAgents(db)) {
    if (a.revokedAt) continue;
    const caps = Capabilities.safeParse(a.capabilities);
    const gpus = caps.success ? caps.data.gpus : [];
    if (gpus.length === 0 || gpus.length < minGpus) continue;
    const min = Math.min(...gpus.map((g) => g.memoryMb));
    best = best === null ? min : Math.max(best, min);
  }
  return best;
}

export async function refuseUnfitRecipe(db: Db, config: ExperimentConfig): Promise<void> {
  if (!config.baseModel.shape) return;
  const gpuMb = await largestGpuMb(db);
  if (gpuMb === null) return;
  const n = config.training.gpus;
  const trainGpuMb = n > 1 ? await largestGpuMb(db, n) : gpuMb;
  if (trainGpuMb === null)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `training.gpus = ${n}: no enrolled agent has ${n} GPUs (the most on one agent is ${await mostGpus(db)}); lower training.gpus or enroll a larger box`,
    );
  const train = trainsOnGpu(config) ? trainMemoryEstimate(config) : null;
  const trainNo = train && memoryRefusal(train, trainGpuMb, trainFitHint(trainRecipe(config)));
  if (trainNo) throw new DomainError("PRECONDITION_FAILED", `training ${config.baseModel.ref} ${trainNo}`);
  // DPO trains in one process on one GPU, whatever training.gpus, on chosen and rejected at once.
  const dpo = dpoRecipeOf(config) && trainsOnGpu(config) ? dpoMemoryEstimate(config) : null;
  const dpoNo = dpo && memoryRefusal(dpo, gpuMb, "lower dpo.batchSize or training.maxLength, or use a larger GPU");
  if (dpoNo) throw new DomainError("PRECONDITION_FAILED", `DPO training ${config.baseModel.ref} ${dpoNo}`);
  const gen = config.evaluation.device === "cuda" ? generateMemoryEstimate(config, true) : null;
  const genNo = gen && memoryRefusal(gen, gpuMb, "lower max new tokens or max length, or use a larger GPU");
  if (genNo) throw new DomainError("PRECONDITION_FAILED", `generating with ${config.baseModel.ref} ${genNo}`);
}

async function mostGpus(db: Db): Promise<number> {
  let most = 0;
  for (const a of await listAgents(db)) {
    const caps = a.revokedAt ? null : Capabilities.safeParse(a.capabilities);
    if (caps?.success) most = Math.max(most, caps.data.gpus.length);
  }
  return most;
}
