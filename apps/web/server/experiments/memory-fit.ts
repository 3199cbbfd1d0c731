import {
  DomainError,
  Capabilities,
  generateMemoryEstimate,
  memoryRefusal,
  trainFitHint,
  trainMemoryEstimate,
  trainRecipe,
  trainsOnGpu,
  type ExperimentConfig,
} from "@agentlab/core";
import { listAgents, type Db } from "@agentlab/db";

// Issue 16: a recipe whose estimated peak memory (core trainer/memory.ts, from the inspected model
// shape) exceeds every enrolled GPU is refused when the experiment is created, with the numbers,
// instead of queueing jobs no agent will ever claim. Without enrolled GPU agents nothing is refused
// here: the jobs wait with their requirement ("why is it stuck" names it).

/** The largest per-GPU memory an enrolled agent offers (the claim compares with an agent's smallest GPU). */
export async function largestGpuMb(db: Db): Promise<number | null> {
  let best: number | null = null;
  for (const a of await listAgents(db)) {
    if (a.revokedAt) continue;
    const caps = Capabilities.safeParse(a.capabilities);
    const gpus = caps.success ? caps.data.gpus : [];
    if (gpus.length === 0) continue;
    const min = Math.min(...gpus.map((g) => g.memoryMb));
    best = best === null ? min : Math.max(best, min);
  }
  return best;
}

export async function refuseUnfitRecipe(db: Db, config: ExperimentConfig): Promise<void> {
  if (!config.baseModel.shape) return;
  const gpuMb = await largestGpuMb(db);
  if (gpuMb === null) return;
  const train = trainsOnGpu(config) ? trainMemoryEstimate(config) : null;
  const trainNo = train && memoryRefusal(train, gpuMb, trainFitHint(trainRecipe(config)));
  if (trainNo) throw new DomainError("PRECONDITION_FAILED", `training ${config.baseModel.ref} ${trainNo}`);
  const gen = config.evaluation.device === "cuda" ? generateMemoryEstimate(config, true) : null;
  const genNo = gen && memoryRefusal(gen, gpuMb, "lower max new tokens or max length, or use a larger GPU");
  if (genNo) throw new DomainError("PRECONDITION_FAILED", `generating with ${config.baseModel.ref} ${genNo}`);
}
