import type { z } from "zod";
import { DPO_LR_DIVISOR, type DpoRecipe, type ExperimentConfig, type GrpoRecipe } from "../experiments/config";
import type { TaskSpec } from "../tasks";
import { promptHashOf, publicContext, renderRepairPrompt } from "../teacher/prompt";
import type { GenerateJobPayload, TrainJobPayload } from "./contracts";
import type { DpoJobPayload } from "./dpo";
import type { GrpoJobPayload } from "./grpo";
import type { ScoreJobPayload } from "./score";

// The experiment recipe → the train, dpo, grpo and generate jobs' payloads (their requirements:
// ./requirements.ts). Everything that decides the weights, the pairs' answers, the margins or the
// answers comes from the stored recipe, never from the agent that claims the job.

/** The dataset snapshot a train job fetches: its blob hash in the artifact store. */
export type TrainData = { datasetHash: string; evalDatasetHash?: string | null };

export function trainJobPayload(
  config: ExperimentConfig,
  seed: number,
  data: TrainData,
): z.input<typeof TrainJobPayload> {
  const tc = config.training;
  return {
    datasetHash: data.datasetHash,
    evalDatasetHash: data.evalDatasetHash ?? null,
    spec: {
      base_model: config.baseModel.ref,
      lora: { r: tc.lora.r, alpha: tc.lora.alpha, dropout: tc.lora.dropout, target_modules: tc.lora.targets },
      epochs: tc.epochs,
      learning_rate: tc.learningRate,
      lr_schedule: tc.schedule,
      batch_size: tc.batchSize,
      grad_accum: tc.gradAccum,
      max_length: tc.maxLength,
      seed,
      quantization: tc.quantization,
      local_files_only: config.baseModel.source === "path",
      revision: config.baseModel.revision ?? null,
      // Resolved at creation; the trainer refuses a job it cannot run with exactly this method.
      method: tc.method ?? null,
      gradient_checkpointing: tc.gradientCheckpointing ?? null,
      // N GPUs: N DDP ranks under torchrun; the requirement asks the claim for N GPUs.
      world_size: tc.gpus,
      parallel: tc.parallel,
      // Only when set, so a recipe stored before them gives the same spec as before.
      ...(tc.steps !== undefined ? { steps: tc.steps } : {}),
      ...(tc.batchTokens !== undefined ? { batch_tokens: tc.batchTokens } : {}),
    },
  };
}

/** The adapter to generate with: its snapshot hash and its archive; null for the base model. */
export type GenerateAdapter = { sha256: string; artifact: string | null } | null;

export function generateJobPayload(
  config: ExperimentConfig,
  tasks: readonly TaskSpec[],
  adapter: GenerateAdapter,
): z.input<typeof GenerateJobPayload> {
  const ev = config.evaluation;
  return {
    spec: {
      base_model: config.baseModel.ref,
      revision: config.baseModel.revision ?? null,
      prompts: tasks.map((t) => ({ task_id: t.id, messages: renderRepairPrompt(publicContext(t, ev.promptVariant)) })),
      max_new_tokens: ev.maxNewTokens,
      do_sample: ev.decoding.doSample,
      temperature: ev.decoding.temperature,
      top_p: ev.decoding.topP,
      // n answers per prompt; each sample's seed derives from this one and the task.
      samples: ev.samples,
      seed: ev.seed,
      backend: ev.backend,
      device: ev.device,
      dtype: ev.dtype,
      use_checkpoint_generation_config: ev.checkpointGenerationConfig,
      // The trainer refuses to generate when the unpacked adapter does not hash to this.
      expected_adapter_sha256: adapter?.sha256 ?? null,
      local_files_only: config.baseModel.source === "path",
    },
    adapterSha256: adapter?.sha256 ?? null,
    adapterArtifact: adapter?.artifact ?? null,
    promptTemplateHash: promptHashOf(ev.promptVariant),
  };
}

// ------------------------------------------------------------------ dpo (the sft+dpo recipe)

/** The adapter a round starts from (null: the base, so DPO trains a fresh LoRA whose reference is the base). */
export type DpoStartAdapter = { sha256: string; artifact: string | null } | null;

/**
 * The recipe with its evaluation protocol swapped for the sampling of rejected answers on train:
 * n sampled answers per task at the DPO block's temperature, under the prompts training shows.
 * Everything else (template, max tokens, backend, device, grader) stays the recipe's, so a train
 * answer is graded like an evaluated one.
 */
export function samplingConfig(config: ExperimentConfig, dpo: DpoRecipe): ExperimentConfig {
  return {
    ...config,
    evaluation: {
      ...config.evaluation,
      // Train-side answers: under the prompts training shows, not the evaluation's.
      promptVariant: config.training.promptVariant,
      samples: dpo.samples,
      decoding: { doSample: true, temperature: dpo.temperature, topP: dpo.topP },
    },
  };
}

/** The start adapter of a dpo or grpo job by archive and hash; one without an archive could not be fetched. */
function startAdapterFields(start: DpoStartAdapter, job: "dpo" | "grpo") {
  if (start && !start.artifact)
    throw new Error(`the start adapter has no archive in the artifact store: a ${job} job could not fetch it`);
  return { startAdapterArtifact: start?.artifact ?? null, startAdapterSha256: start?.sha256 ?? null };
}

/** The model of a run that may start from an adapter: a fresh LoRA on the base takes the recipe's shape; a start adapter keeps its own. */
function startedRunModel(config: ExperimentConfig) {
  const tc = config.training;
  return {
    base_model: config.baseModel.ref,
    revision: config.baseModel.revision ?? null,
    local_files_only: config.baseModel.source === "path",
    lora: { r: tc.lora.r, alpha: tc.lora.alpha, dropout: tc.lora.dropout, target_modules: tc.lora.targets },
  };
}

/** A dpo job: training from the round's start policy (its reference), or scoring the pairs under it. */
export function dpoJobPayload(
  config: ExperimentConfig,
  dpo: DpoRecipe,
  opts: { seed: number; pairsHash: string; start: DpoStartAdapter; scoreOnly: boolean },
): DpoJobPayload {
  const tc = config.training;
  return {
    pairsHash: opts.pairsHash,
    ...startAdapterFields(opts.start, "dpo"),
    spec: {
      ...startedRunModel(config),
      epochs: dpo.epochs,
      learning_rate: dpo.learningRate ?? tc.learningRate / DPO_LR_DIVISOR,
      lr_schedule: tc.schedule,
      batch_size: dpo.batchSize,
      grad_accum: tc.gradAccum,
      max_length: tc.maxLength,
      seed: opts.seed,
      quantization: tc.quantization,
      method: tc.method ?? null,
      beta: dpo.beta,
      sft_weight: dpo.sftWeight,
      score_only: opts.scoreOnly,
      // The control arm: same pairs, batches, steps and rate, the SFT term alone (sent only then,
      // so a DPO job's payload is what it was).
      ...(config.method === "sft+rft" && !opts.scoreOnly ? { objective: "rft" as const } : {}),
      ...(dpo.labels === "swapped" && !opts.scoreOnly ? { swap_labels: true } : {}),
    },
  };
}

/** A DPO run's epoch snapshot to score (its archive and tree hash). */
export type ScoredSnapshot = { epoch: number; sha256: string; artifact: string };

/**
 * A score job: the held-out pairs under the run's start policy (its reference, null = the base) and
 * under each epoch snapshot, with the recipe's model, method and sequence length.
 */
export function scoreJobPayload(
  config: ExperimentConfig,
  dpo: DpoRecipe,
  opts: { pairsHash: string; start: DpoStartAdapter; snapshots: readonly ScoredSnapshot[] },
): ScoreJobPayload {
  const tc = config.training;
  if (opts.start && !opts.start.artifact)
    throw new Error("the start adapter has no archive in the artifact store: a score job could not fetch it");
  return {
    pairsHash: opts.pairsHash,
    referenceAdapterArtifact: opts.start?.artifact ?? null,
    referenceAdapterSha256: opts.start?.sha256 ?? null,
    policies: opts.snapshots.map((s) => ({
      name: `epoch-${s.epoch}`,
      adapterArtifact: s.artifact,
      adapterSha256: s.sha256,
    })),
    spec: {
      base_model: config.baseModel.ref,
      revision: config.baseModel.revision ?? null,
      local_files_only: config.baseModel.source === "path",
      method: tc.method ?? null,
      quantization: tc.quantization,
      max_length: tc.maxLength,
      batch_size: dpo.batchSize,
    },
  };
}

// ------------------------------------------------------------------ grpo (the sft+grpo recipe)

/**
 * A grpo job: one seed's online RL run from the dev-selected start (null: a fresh LoRA on the base)
 * on the train tasks the stage stored as its prompts. Every GRPO setting comes from the recipe's
 * grpo block (filled at creation), the model, LoRA shape, schedule and method from the SFT recipe.
 */
export function grpoJobPayload(
  config: ExperimentConfig,
  grpo: GrpoRecipe,
  opts: { seed: number; tasks: readonly TaskSpec[]; start: DpoStartAdapter },
): GrpoJobPayload {
  const tc = config.training;
  return {
    splitId: config.splitId,
    // Only train tasks reach here (the stage read them from grpo_prompts, which refuses any other part).
    tasks: opts.tasks.map((task) => ({ task, part: "train" as const })),
    ...startAdapterFields(opts.start, "grpo"),
    rewardControl: grpo.rewardControl,
    promptVariant: config.training.promptVariant,
    spec: {
      ...startedRunModel(config),
      lr_schedule: tc.schedule,
      grad_accum: tc.gradAccum,
      max_length: tc.maxLength,
      seed: opts.seed,
      quantization: tc.quantization,
      method: tc.method ?? null,
      learning_rate: grpo.learningRate,
      num_generations: grpo.numGenerations,
      prompts_per_step: grpo.promptsPerStep,
      beta: grpo.beta,
      loss_type: grpo.lossType,
      scale_rewards: grpo.scaleRewards,
      epsilon: grpo.epsilon,
      epsilon_high: grpo.epsilonHigh,
      mask_truncated_completions: grpo.maskTruncatedCompletions,
      max_completion_length: grpo.maxCompletionLength ?? config.evaluation.maxNewTokens,
      temperature: grpo.temperature,
      top_p: grpo.topP,
      max_steps: grpo.steps,
      snapshot_every_steps: grpo.snapshotEverySteps,
      // Only with dynamic sampling, so a recipe without it gives the same spec as before.
      ...(grpo.dynamicSampling
        ? {
            equal_reward_groups: grpo.dynamicSampling.equalRewardGroups,
            max_resamples: grpo.dynamicSampling.maxResamples,
          }
        : {}),
    },
  };
}

/**
 * The recipe with its evaluation protocol swapped for the pass-rate measurement of GRPO's dynamic
 * sampling: numGenerations sampled answers per train task at the RL run's temperature, top-p and
 * completion length, under the prompts training shows, so a task's measured rate is the one its
 * first RL groups would see. Everything else (template, backend, device, grader) stays the recipe's.
 */
export function grpoSamplingConfig(config: ExperimentConfig, grpo: GrpoRecipe): ExperimentConfig {
  return {
    ...config,
    evaluation: {
      ...config.evaluation,
      promptVariant: config.training.promptVariant,
      samples: grpo.numGenerations,
      maxNewTokens: grpo.maxCompletionLength ?? config.evaluation.maxNewTokens,
      decoding: { doSample: true, temperature: grpo.temperature, topP: grpo.topP },
    },
  };
}
