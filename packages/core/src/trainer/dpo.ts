import { z } from "zod";
import { AdapterSnapshot, ChatMessage, Sha256, TrainerEnvironment, TRAINING_RUN_FIELDS, TrainMethod } from "./shared";

// The `dpo` trainer command: preference training from execution-verified pairs. The spec
// mirrors TrainSpec where the two share a meaning (same defaults in Python: dpo.DPO_DEFAULTS builds
// on train.TRAIN_DEFAULTS; tests/test_spec_contract.py ties them).

/** A prompt's message: the answer is the assistant turn, so a prompt holds none. */
export const PromptMessage = ChatMessage.extend({ role: z.enum(["system", "user"]) });
export type PromptMessage = z.infer<typeof PromptMessage>;

/** One line of the pairs JSONL the trainer reads: a prompt (no assistant turn) and two answers. */
export const DpoPairLine = z.strictObject({
  pair_id: z.string().min(1),
  prompt: z.array(PromptMessage).min(1),
  chosen: z.string().min(1),
  rejected: z.string().min(1),
  /** The pair's share of the DPO term (a down-weighted pair counts less); default 1. */
  weight: z.number().positive().optional(),
});
export type DpoPairLine = z.infer<typeof DpoPairLine>;

export const DpoSpec = z.strictObject({
  ...TRAINING_RUN_FIELDS,
  /** Pairs JSONL: one DpoPairLine per line. */
  pairs: z.string().min(1),
  /**
   * The SFT adapter to start from (made trainable; it is also the reference, frozen as loaded).
   * Absent: a fresh LoRA on the base, whose reference is the base (adapter disabled).
   */
  start_adapter: z.string().min(1).optional(),
  /** The start adapter folder must hash (sha256_tree) to this, or the run is refused before training. */
  expected_start_adapter_sha256: Sha256.nullable().optional(),
  /** Only the reference log-probs and margins of every pair: no training, no snapshot. */
  score_only: z.boolean().default(false),
  /** DPO temperature: rewards are β·(log π − log π_ref). */
  beta: z.number().positive().max(100).default(0.1),
  /** Weight of an SFT term (token-mean cross-entropy) on the chosen answers; 0 = pure DPO. */
  sft_weight: z.number().min(0).max(100).default(1),
  learning_rate: z.number().positive().default(5e-5),
  /** Pairs per micro-batch (each forward holds 2 × batch_size sequences). */
  batch_size: z.number().int().min(1).default(2),
  /**
   * dpo: the preference loss (plus the SFT term at sft_weight). rft: the control arm, the SFT term
   * on the chosen answers alone (weight 1) over the same pairs, batches, steps and learning rate.
   */
  objective: z.enum(["dpo", "rft"]).default("dpo"),
  /** The negative control: every pair trained with chosen and rejected exchanged (the SFT term then on the rejected). */
  swap_labels: z.boolean().default(false),
});
export type DpoSpec = z.infer<typeof DpoSpec>;

/** A pair under the reference (the starting policy): what the margin filter reads. */
export const DpoPairScore = z.object({
  pair_id: z.string(),
  ref_chosen_logp: z.number(),
  ref_rejected_logp: z.number(),
  /** ref_chosen_logp − ref_rejected_logp: > 0 means the policy already prefers the chosen answer. */
  margin: z.number(),
  chosen_tokens: z.number().int(),
  rejected_tokens: z.number().int(),
  weight: z.number(),
});
export type DpoPairScore = z.infer<typeof DpoPairScore>;

export const DpoSnapshot = AdapterSnapshot.extend({
  /** Epoch means of the steps' reward margin and preference accuracy. */
  reward_margin: z.number(),
  preference_accuracy: z.number().min(0).max(1),
  /**
   * At the epoch's end, over the train pairs: mean log π − log π_ref of the chosen and of the
   * rejected answers (nats per answer). Absent in records from before they were measured.
   */
  chosen_logp_delta: z.number().optional(),
  rejected_logp_delta: z.number().optional(),
  /** Set when the chosen answers' log-prob fell (likelihood displacement). */
  logp_warning: z.string().nullable().optional(),
});
export type DpoSnapshot = z.infer<typeof DpoSnapshot>;

/** The run record of a dpo command (train or score mode), carried by its result event. */
export const DpoRecord = z.object({
  status: z.enum(["succeeded", "canceled"]),
  mode: z.enum(["train", "score"]),
  method: TrainMethod,
  device: z.enum(["cpu", "cuda"]),
  config: z.record(z.string(), z.unknown()),
  pairs_sha256: Sha256,
  chat_template_sha256: Sha256,
  model: z.object({ id: z.string(), path: z.string(), weights_sha256: Sha256.nullable() }),
  start_adapter_sha256: Sha256.nullable(),
  reference: z.string(),
  seed: z.number().int(),
  eot_token: z.string(),
  beta: z.number(),
  sft_weight: z.number(),
  /** Absent in records from before the rft control existed (all dpo then). */
  objective: z.enum(["dpo", "rft"]).optional(),
  /** Set when the run trained on swapped labels (the control); absent in earlier records. */
  swap_labels: z.boolean().optional(),
  /** Dropout modules set to p = 0 (policy and reference forwards are the same function). */
  dropout_modules_disabled: z.number().int().optional(),
  pair_count: z.number().int(),
  pairs: z.array(DpoPairScore),
  trainable_parameters: z.number().int(),
  total_steps: z.number().int(),
  steps: z.number().int(),
  epochs_completed: z.number().int(),
  snapshots: z.array(DpoSnapshot),
  started_at: z.string(),
  finished_at: z.string(),
  train_time_s: z.number(),
  wall_time_s: z.number(),
  supervised_tokens: z.number().int(),
  supervised_tokens_per_s: z.number(),
  peak_memory_mb: z.number(),
  environment: TrainerEnvironment,
  pip_freeze: z.array(z.string()),
});
export type DpoRecord = z.infer<typeof DpoRecord>;
