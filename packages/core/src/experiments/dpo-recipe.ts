import { z } from "zod";
import { MarginFilter } from "../preference/pairs";

// The preference half of an `sft+dpo` recipe (issue 18). Everything that decides the pairs and the
// DPO weights is here, so the stored config reproduces them: how the start policy is sampled on
// train for rejected answers, the margin filter, and the DPO run's own schedule.

export const EXPERIMENT_METHODS = ["sft", "sft+dpo"] as const;
export const ExperimentMethod = z.enum(EXPERIMENT_METHODS);
export type ExperimentMethod = z.infer<typeof ExperimentMethod>;

/** The most DPO rounds a recipe may ask for (each round samples, grades, pairs and trains again). */
export const MAX_DPO_ROUNDS = 4;

export const DpoRecipe = z.strictObject({
  /** DPO temperature: rewards are β·(log π − log π_ref). */
  beta: z.number().positive().max(100).default(0.1),
  /** 1 = pairs from the SFT start only; k > 1 re-samples from round k−1's dev-best DPO policy and trains again. */
  rounds: z.number().int().min(1).max(MAX_DPO_ROUNDS).default(1),
  /** Answers sampled per train task from the round's start policy; its graded failures are the rejected answers. */
  samples: z.number().int().min(1).max(64).default(4),
  /** Sampling of those answers (always sampled decoding: n greedy answers would be one answer n times). */
  temperature: z.number().positive().max(10).default(1),
  topP: z.number().gt(0).max(1).default(1),
  /** Weight of an SFT term on the chosen answers; 0 = pure DPO. */
  sftWeight: z.number().min(0).max(100).default(0),
  epochs: z.number().int().min(1).max(50).default(2),
  learningRate: z.number().positive().max(1).default(5e-5),
  /** Pairs per micro-batch (each forward holds 2 × batchSize sequences). */
  batchSize: z.number().int().min(1).max(1024).default(2),
  /** Pairs the start policy already prefers by more than the threshold are dropped or down-weighted, and counted. */
  marginFilter: MarginFilter.default({ threshold: 0, mode: "drop", factor: 0.25 }),
});
export type DpoRecipe = z.infer<typeof DpoRecipe>;
export type DpoRecipeInput = z.input<typeof DpoRecipe>;

/** The DPO settings of an sft+dpo recipe (defaults when the block was left out); null for plain SFT. */
export function dpoRecipeOf(config: { method?: ExperimentMethod; dpo?: DpoRecipe }): DpoRecipe | null {
  if (config.method !== "sft+dpo") return null;
  return config.dpo ?? DpoRecipe.parse({});
}
