import { z } from "zod";
import { DpoRecord } from "./dpo";
import { EpisodePolicySummary } from "./episode-policy";
import { GrpoRecord, GrpoStepMetrics } from "./grpo";
import { InspectModelSummary } from "./inspect";
import { ScoreRecord } from "./score";
import { GenerateSummary, RunRecord, TinyModelSummary, TokenizeSummary, TrainerCommand } from "./schemas";
import { AdapterSnapshot, Sha256 } from "./shared";

// What the trainer writes on stdout: one JSON line per event, each a TrainerEvent (the specs and
// the records these events carry are in schemas.ts).

export const TrainerProgressEvent = z.object({
  event: z.literal("progress"),
  step: z.number().int().min(1),
  total_steps: z.number().int().min(1),
  epoch: z.number().int().min(1),
  /** Fraction of the current epoch done, 0..1. */
  epoch_progress: z.number().min(0).max(1),
  loss: z.number(),
  lr: z.number(),
  /** Supervised tokens per second of training so far. */
  tokens_per_s: z.number(),
  eta_s: z.number(),
  memory_mb: z.number(),
  // dpo only: the step's DPO and SFT terms, mean reward margin β·Δ, preference accuracy, mean rewards
  dpo_loss: z.number().optional(),
  sft_loss: z.number().optional(),
  reward_margin: z.number().optional(),
  preference_accuracy: z.number().min(0).max(1).optional(),
  chosen_reward: z.number().optional(),
  rejected_reward: z.number().optional(),
  // dpo, the last step of each epoch: mean Δ log-prob (nats per answer, against the reference) of
  // the train pairs' chosen and rejected answers, and a warning when the chosen one fell
  chosen_logp_delta: z.number().optional(),
  rejected_logp_delta: z.number().optional(),
  logp_warning: z.string().optional(),
});
export type TrainerProgressEvent = z.infer<typeof TrainerProgressEvent>;

export const TrainerArtifactEvent = AdapterSnapshot.extend({
  event: z.literal("artifact"),
  kind: z.literal("adapter"),
});
export type TrainerArtifactEvent = z.infer<typeof TrainerArtifactEvent>;

/** After each epoch but the last of a one-process SFT run: what a resumption after that epoch loads (spec.resume). */
export const TrainerStateEvent = z.object({
  event: z.literal("trainer_state"),
  epoch: z.number().int().min(1),
  path: z.string(),
  sha256: Sha256,
});
export type TrainerStateEvent = z.infer<typeof TrainerStateEvent>;

export const TrainerGenerationEvent = z.object({
  event: z.literal("generation"),
  task_id: z.string(),
  /** 0..samples-1 within the task. */
  sample_index: z.number().int().min(0),
  /** The seed this sample was drawn with; null for greedy decoding. */
  seed: z.number().int().min(0).nullable(),
  text: z.string(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  finish_reason: z.enum(["stop", "length"]),
});
export type TrainerGenerationEvent = z.infer<typeof TrainerGenerationEvent>;

/** One grpo optimizer step: its reward, group and judge-audit figures (jobs/progress.ts GrpoStepProgress). */
export const TrainerGrpoStepEvent = GrpoStepMetrics.extend({ event: z.literal("grpo_step") });
export type TrainerGrpoStepEvent = z.infer<typeof TrainerGrpoStepEvent>;

export const TrainerLogEvent = z.object({
  event: z.literal("log"),
  level: z.enum(["debug", "info", "warning", "error"]).default("info"),
  message: z.string(),
});
export type TrainerLogEvent = z.infer<typeof TrainerLogEvent>;

export const TrainerErrorInfo = z.object({
  kind: z.enum(["user_error", "internal_error", "canceled"]),
  message: z.string(),
});
export type TrainerErrorInfo = z.infer<typeof TrainerErrorInfo>;

export const TrainerResultEvent = z.object({
  event: z.literal("result"),
  command: TrainerCommand,
  status: z.enum(["succeeded", "failed", "canceled"]),
  error: TrainerErrorInfo.optional(),
  /** train: the run record (also on cancel, with the finished epochs' snapshots). */
  record: RunRecord.optional(),
  /** dpo: its run record (also on cancel, with the finished epochs' snapshots). */
  dpo: DpoRecord.optional(),
  /** grpo: its run record (also on cancel, with the snapshots taken so far). */
  grpo: GrpoRecord.optional(),
  /** score: the log-probs of the pairs under the reference and each policy. */
  score: ScoreRecord.optional(),
  generate: GenerateSummary.optional(),
  tokenize: TokenizeSummary.optional(),
  inspect_model: InspectModelSummary.optional(),
  tiny_model: TinyModelSummary.optional(),
  /** episode-policy: the turns a local model answered for one episode job. */
  episode_policy: EpisodePolicySummary.optional(),
});
export type TrainerResultEvent = z.infer<typeof TrainerResultEvent>;

export const TrainerEvent = z.discriminatedUnion("event", [
  TrainerProgressEvent,
  TrainerArtifactEvent,
  TrainerStateEvent,
  TrainerGenerationEvent,
  TrainerGrpoStepEvent,
  TrainerLogEvent,
  TrainerResultEvent,
]);
export type TrainerEvent = z.infer<typeof TrainerEvent>;
