import { z } from "zod";
import { GradeVerdict } from "../grading/schemas";
import { PromptMessage } from "./dpo";
import { AdapterSnapshot, Sha256, TrainerEnvironment, TRAINING_RUN_FIELDS, TrainMethod } from "./shared";

// The `grpo` trainer command: online RL with an execution reward (TRL GRPOTrainer, LoRA). The
// trainer never grades: its reward function sends each batch of completions to the parent (the
// agent) over a Unix socket and reads one verdict per completion back, graded by the isolated judge.
// Every GRPO setting is pinned here with TRL 1.16's GRPOConfig default (learning rate, group size,
// β, loss, reward scaling, clip range), except where the recipe differs on purpose
// (epsilon_high 0.28 and masked truncations, DAPO's clip-higher and overlong filtering).

/** One line of the prompts JSONL: a train task's repair prompt (no assistant turn). */
export const GrpoPromptLine = z.strictObject({
  task_id: z.string().min(1),
  prompt: z.array(PromptMessage).min(1),
});
export type GrpoPromptLine = z.infer<typeof GrpoPromptLine>;

/**
 * A group whose rewards are all equal has zero advantage (no signal). "keep": TRL's behaviour, its
 * tokens still count in the loss's denominator (diluting the other groups' gradient); "filter": its
 * completions leave the loss; "resample": its prompt is sampled again (up to max_resamples rounds),
 * what is still equal after that is filtered (DAPO's dynamic sampling, per group).
 */
export const GrpoEqualRewardGroups = z.enum(["keep", "filter", "resample"]);
export type GrpoEqualRewardGroups = z.infer<typeof GrpoEqualRewardGroups>;

export const GrpoSpec = z.strictObject({
  ...TRAINING_RUN_FIELDS,
  /** Prompts JSONL: one GrpoPromptLine per line (train tasks only; the job's contract guards it). */
  prompts: z.string().min(1),
  /** The Unix socket of the parent that grades (GrpoRewardRequest out, GrpoRewardResponse back). */
  reward_socket: z.string().min(1),
  /** Seconds the reward function waits for one batch's verdicts before the run fails. */
  reward_timeout_s: z.number().positive().default(1800),
  /** An SFT snapshot to start from (made trainable); absent: a fresh LoRA on the base. */
  start_adapter: z.string().min(1).optional(),
  expected_start_adapter_sha256: Sha256.nullable().optional(),
  learning_rate: z.number().positive().default(1e-6),
  /** Completions per prompt (the group whose rewards are normalised together). */
  num_generations: z.number().int().min(2).default(8),
  /** Prompts per optimizer step (× num_generations completions; TRL's batch is their product). */
  prompts_per_step: z.number().int().min(1).default(1),
  /** KL coefficient to the start policy; 0 = no reference model (TRL's default). */
  beta: z.number().min(0).default(0),
  loss_type: z.enum(["dapo", "grpo", "dr_grpo", "bnpo"]).default("dapo"),
  scale_rewards: z.enum(["group", "batch", "none"]).default("group"),
  epsilon: z.number().positive().default(0.2),
  epsilon_high: z.number().positive().default(0.28),
  /** Truncated completions leave the loss (DAPO's overlong filtering). */
  mask_truncated_completions: z.boolean().default(true),
  max_completion_length: z.number().int().min(1).default(512),
  temperature: z.number().positive().default(1),
  top_p: z.number().gt(0).max(1).default(1),
  max_steps: z.number().int().min(1),
  /** An adapter snapshot every K steps (and at the last step): the "epochs" dev evaluates. */
  snapshot_every_steps: z.number().int().min(1),
  equal_reward_groups: GrpoEqualRewardGroups.default("keep"),
  /** Resample rounds per generation batch (equal_reward_groups "resample" only). */
  max_resamples: z.number().int().min(1).max(16).default(2),
});
export type GrpoSpec = z.infer<typeof GrpoSpec>;

// ------------------------------------------------------------------ the reward protocol

/** One completion to grade: the prompt's task and the text the policy wrote. */
export const GrpoRewardItem = z.strictObject({ task_id: z.string().min(1), completion: z.string() });
/** What the trainer sends (one JSON line) for each batch the reward function scores. */
export const GrpoRewardRequest = z.strictObject({
  id: z.number().int().min(0),
  step: z.number().int().min(0),
  items: z.array(GrpoRewardItem).min(1),
});
export type GrpoRewardRequest = z.infer<typeof GrpoRewardRequest>;

/** A completion's verdict: the judge's, or `unparseable` (no file could be read from the text). */
export const GrpoVerdict = z.union([GradeVerdict, z.literal("unparseable")]);
export type GrpoVerdict = z.infer<typeof GrpoVerdict>;
export const GrpoItemVerdict = z.strictObject({
  verdict: GrpoVerdict,
  /** Judge flags beyond the verdict (e.g. `refused_import`, `canary`), counted in the step's audit. */
  flags: z.array(z.string()).default([]),
});
export type GrpoItemVerdict = z.infer<typeof GrpoItemVerdict>;
/** The parent's answer, one verdict per item in the request's order; `error` fails the run. */
export const GrpoRewardResponse = z.strictObject({
  id: z.number().int().min(0),
  verdicts: z.array(GrpoItemVerdict).optional(),
  error: z.string().optional(),
  /** Seconds the parent spent grading the batch (the judge's throughput). */
  grade_time_s: z.number().min(0).optional(),
});
export type GrpoRewardResponse = z.infer<typeof GrpoRewardResponse>;

// ------------------------------------------------------------------ metrics and record

/** The step's reward-hacking audit: completions per verdict kind and per judge flag. */
export const GrpoAudit = z.strictObject({
  tampered: z.number().int().min(0),
  timeout: z.number().int().min(0),
  resource_limit: z.number().int().min(0),
  unparseable: z.number().int().min(0),
  infra_error: z.number().int().min(0),
  /** Judge flags of the step, each with its count (a list: the trainer's schema checker reads no records). */
  flags: z.array(z.strictObject({ flag: z.string(), count: z.number().int().min(1) })),
});
export type GrpoAudit = z.infer<typeof GrpoAudit>;

/** One optimizer step of a grpo run (the `grpo_step` progress event carries it). */
export const GrpoStepMetrics = z.strictObject({
  step: z.number().int().min(1),
  total_steps: z.number().int().min(1),
  loss: z.number(),
  lr: z.number(),
  /** Over the scored completions (masked groups left out). */
  reward_mean: z.number(),
  reward_std: z.number(),
  /** Groups of the step whose rewards were all equal (no learning signal). */
  zero_variance_share: z.number().min(0).max(1),
  completion_length_mean: z.number(),
  truncated_share: z.number().min(0).max(1),
  entropy: z.number().nullable(),
  /** KL to the start policy; null when β = 0 (no reference model). */
  kl: z.number().nullable(),
  completions: z.number().int().min(0),
  /** Groups dropped from the step because a completion got infra_error. */
  masked_groups: z.number().int().min(0),
  /**
   * Dynamic sampling (equal_reward_groups filter or resample; absent when kept, and in steps from
   * before it): groups regenerated because their rewards were all equal, and groups left out of
   * the loss for it (filtered, or still equal after the last resample). zero_variance_share stays
   * the share of the step's first draw.
   */
  resampled_groups: z.number().int().min(0).optional(),
  dropped_groups: z.number().int().min(0).optional(),
  pass_count: z.number().int().min(0),
  grades_per_s: z.number().min(0),
  audit: GrpoAudit,
  eta_s: z.number(),
  memory_mb: z.number(),
});
export type GrpoStepMetrics = z.infer<typeof GrpoStepMetrics>;

export const GrpoSnapshot = AdapterSnapshot.extend({ reward_mean: z.number() });
export type GrpoSnapshot = z.infer<typeof GrpoSnapshot>;

export const GrpoRecord = z.object({
  status: z.enum(["succeeded", "canceled"]),
  method: TrainMethod,
  device: z.enum(["cpu", "cuda"]),
  /** Every GRPO setting as TRL ran it (GRPOConfig), the protocol record's copy. */
  config: z.record(z.string(), z.unknown()),
  prompts_sha256: Sha256,
  prompt_count: z.number().int(),
  model: z.object({ id: z.string(), path: z.string(), weights_sha256: Sha256.nullable() }),
  start_adapter_sha256: Sha256.nullable(),
  seed: z.number().int(),
  trl: z.string(),
  trainable_parameters: z.number().int(),
  total_steps: z.number().int(),
  steps: z.number().int(),
  step_metrics: z.array(GrpoStepMetrics),
  snapshots: z.array(GrpoSnapshot),
  masked_groups: z.number().int(),
  graded_completions: z.number().int(),
  started_at: z.string(),
  finished_at: z.string(),
  train_time_s: z.number(),
  wall_time_s: z.number(),
  grade_time_s: z.number(),
  peak_memory_mb: z.number(),
  environment: TrainerEnvironment,
  pip_freeze: z.array(z.string()),
});
export type GrpoRecord = z.infer<typeof GrpoRecord>;
