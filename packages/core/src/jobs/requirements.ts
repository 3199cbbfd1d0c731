import { dpoRecipeOf, DpoRecipe, grpoRecipeOf, GrpoRecipe, type ExperimentConfig } from "../experiments/config";
import type { ModelShape } from "../trainer/inspect";
import {
  estimateGenerateMemory,
  estimateTrainMemory,
  type GenerateRecipe,
  type MemoryEstimate,
  type TrainRecipe,
} from "../trainer/memory";
import type { JobRequirements } from "./schemas";

// What the train, dpo, grpo and generate jobs of an experiment need from the agent that claims them:
// a GPU for the GPU methods and devices, with at least the memory the estimate (trainer/memory.ts)
// gives for the base model's shape, when the form inspected it. The tiny CPU model needs nothing.
// GPU jobs are exclusive (no gpuShare): the claim never gives a second one to an agent whose GPUs
// are taken, because a vLLM engine reserves most of the card and training peaks are near its size.

/** Rows of the lm_head + loss the trainer computes at once (agentlab_trainer/loss.py). */
export const TRAINER_LOSS_CHUNK = 1024;

/** Rows of the GenerateSpec the estimate needs; generate jobs use the spec's default batch of 8. */
export const GENERATE_BATCH = 8;

/** The training recipe of an experiment as the estimate reads it. */
export function trainRecipe(config: ExperimentConfig, supervisedPerSample?: number): TrainRecipe {
  const tc = config.training;
  return {
    method: tc.method ?? "lora-fp32",
    loraRank: tc.lora.r,
    loraTargets: tc.lora.targets,
    batchSize: tc.batchSize,
    seqLength: tc.maxLength,
    ...(tc.batchTokens !== undefined ? { batchTokens: tc.batchTokens } : {}),
    // The trainer checkpoints real models' layers unless the recipe says otherwise, and
    // computes the loss at supervised positions only, the head and its cross-entropy in
    // checkpointed chunks of rows. (Only real models are estimated: the tiny one needs no GPU.)
    // A token batch's sample count is unknown: its chunk bound holds whatever the count.
    gradientCheckpointing: tc.gradientCheckpointing ?? true,
    loss:
      tc.batchTokens === undefined &&
      supervisedPerSample !== undefined &&
      supervisedPerSample * tc.batchSize < TRAINER_LOSS_CHUNK
        ? { kind: "supervised", positionsPerSample: supervisedPerSample }
        : { kind: "chunked", chunkTokens: TRAINER_LOSS_CHUNK },
    ranks: tc.gpus,
    parallel: tc.parallel,
  };
}

export function generateRecipe(config: ExperimentConfig, withAdapter: boolean): GenerateRecipe {
  return {
    dtype: config.evaluation.dtype === "float32" ? "float32" : "bfloat16",
    batchSize: GENERATE_BATCH,
    // A prompt is at most the training length: longer tasks were never trained or shown.
    promptTokens: config.training.maxLength,
    maxNewTokens: config.evaluation.maxNewTokens,
    lora: withAdapter ? { rank: config.training.lora.r, targets: config.training.lora.targets } : null,
  };
}

const shapeOf = (config: ExperimentConfig): ModelShape | null => config.baseModel.shape ?? null;

/** The training estimate of the experiment's recipe, when its base model's shape is known. */
export function trainMemoryEstimate(config: ExperimentConfig, supervisedPerSample?: number): MemoryEstimate | null {
  const shape = shapeOf(config);
  return shape ? estimateTrainMemory(shape, trainRecipe(config, supervisedPerSample)) : null;
}

export function generateMemoryEstimate(config: ExperimentConfig, withAdapter: boolean): MemoryEstimate | null {
  const shape = shapeOf(config);
  return shape ? estimateGenerateMemory(shape, generateRecipe(config, withAdapter)) : null;
}

/** Whether this recipe trains on a GPU: every method but fp32 LoRA (the one a CPU agent can run). */
export const trainsOnGpu = (config: ExperimentConfig): boolean =>
  config.training.method !== undefined && config.training.method !== "lora-fp32";

/**
 * `training.gpus` GPUs, each with the estimate of one rank: the whole model, at most
 * `batchSize` samples at once (the window is dealt across the ranks), DDP's buckets. Several GPUs are
 * asked for even before the method is resolved: a multi-rank run never lands on a CPU agent.
 */
export function trainJobRequirements(config: ExperimentConfig, supervisedPerSample?: number): JobRequirements {
  const gpus = config.training.gpus;
  if (!trainsOnGpu(config) && gpus === 1) return { labels: [], gpus: 0, gpuMemoryMb: 0 };
  return { labels: [], gpus, gpuMemoryMb: trainMemoryEstimate(config, supervisedPerSample)?.totalMb ?? 0 };
}

/**
 * The recipe a dpo job trains with, as the estimate reads it: one process on one GPU whatever the
 * SFT stage's training.gpus and parallel (the DPO trainer does not run multi-rank), so it holds the
 * whole model, and each micro-batch is chosen and rejected: 2 × dpo.batchSize sequences.
 */
export function dpoTrainRecipe(config: ExperimentConfig): TrainRecipe {
  const dpo = dpoRecipeOf(config) ?? DpoRecipe.parse({});
  // SFT's token batches are no part of DPO: its micro-batches are pairs.
  return { ...trainRecipe(config), batchSize: 2 * dpo.batchSize, batchTokens: undefined, ranks: 1, parallel: "ddp" };
}

export function dpoMemoryEstimate(config: ExperimentConfig): MemoryEstimate | null {
  const shape = shapeOf(config);
  return shape ? estimateTrainMemory(shape, dpoTrainRecipe(config)) : null;
}

/** A dpo job (training or scoring the pairs) needs one GPU for a GPU method, with the one-process estimate. */
export function dpoJobRequirements(config: ExperimentConfig): JobRequirements {
  if (!trainsOnGpu(config)) return { labels: [], gpus: 0, gpuMemoryMb: 0 };
  return { labels: [], gpus: 1, gpuMemoryMb: dpoMemoryEstimate(config)?.totalMb ?? 0 };
}

/**
 * A grpo job is one trainer process on one GPU for a GPU method, like dpo; its memory is the
 * one-process estimate at a micro-batch of the step's completions (num_generations × prompts).
 */
export function grpoJobRequirements(config: ExperimentConfig): JobRequirements {
  if (!trainsOnGpu(config)) return { labels: [], gpus: 0, gpuMemoryMb: 0 };
  const grpo = grpoRecipeOf(config) ?? GrpoRecipe.parse({});
  const shape = shapeOf(config);
  const recipe = {
    ...trainRecipe(config),
    batchSize: grpo.numGenerations * grpo.promptsPerStep,
    batchTokens: undefined,
    ranks: 1,
  };
  return {
    labels: [],
    gpus: 1,
    gpuMemoryMb: shape ? estimateTrainMemory(shape, { ...recipe, parallel: "ddp" }).totalMb : 0,
  };
}

export function generateJobRequirements(config: ExperimentConfig, withAdapter = true): JobRequirements {
  if (config.evaluation.device !== "cuda") return { labels: [], gpus: 0, gpuMemoryMb: 0 };
  return { labels: [], gpus: 1, gpuMemoryMb: generateMemoryEstimate(config, withAdapter)?.totalMb ?? 0 };
}
