import type { DpoJobPayload } from "../jobs/dpo";
import type { ExperimentConfig } from "./config";
import type { DpoRecipe } from "./dpo-recipe";

// The sft+dpo recipe → what its jobs are sent (issue 18). Everything that decides the pairs' answers,
// the margins and the DPO weights comes from the stored recipe, never from the claiming agent.

/** The adapter a round starts from (null: the base, so DPO trains a fresh LoRA whose reference is the base). */
export type DpoStartAdapter = { sha256: string; artifact: string | null } | null;

/**
 * The recipe with its evaluation protocol swapped for the sampling of rejected answers on train:
 * n sampled answers per task at the DPO block's temperature. Everything else (prompt, max tokens,
 * backend, device, grader) stays the recipe's, so a train answer is graded like an evaluated one.
 */
export function samplingConfig(config: ExperimentConfig, dpo: DpoRecipe): ExperimentConfig {
  return {
    ...config,
    evaluation: {
      ...config.evaluation,
      samples: dpo.samples,
      decoding: { doSample: true, temperature: dpo.temperature, topP: dpo.topP },
    },
  };
}

/** A dpo job: training from the round's start policy (its reference), or scoring the pairs under it. */
export function dpoJobPayload(
  config: ExperimentConfig,
  dpo: DpoRecipe,
  opts: { seed: number; pairsHash: string; start: DpoStartAdapter; scoreOnly: boolean },
): DpoJobPayload {
  const tc = config.training;
  if (opts.start && !opts.start.artifact)
    throw new Error("the start adapter has no archive in the artifact store: a dpo job could not fetch it");
  return {
    pairsHash: opts.pairsHash,
    startAdapterArtifact: opts.start?.artifact ?? null,
    startAdapterSha256: opts.start?.sha256 ?? null,
    spec: {
      base_model: config.baseModel.ref,
      revision: config.baseModel.revision ?? null,
      local_files_only: config.baseModel.source === "path",
      // A fresh LoRA on the base takes the recipe's shape; a start adapter keeps its own.
      lora: { r: tc.lora.r, alpha: tc.lora.alpha, dropout: tc.lora.dropout, target_modules: tc.lora.targets },
      epochs: dpo.epochs,
      learning_rate: dpo.learningRate,
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
    },
  };
}
