import { z } from "zod";
import { Sha256, TrainMethod } from "./shared";

// The `score` trainer command: the log-prob of each pair's chosen and rejected answer under a
// reference and under each of several policies (a DPO run's epoch snapshots), with no training.
// On held-out dev pairs it tells whether an epoch kept the chosen answers likely on prompts it never
// trained on (the train pairs' dynamics cannot: they are what the loss pushed on).

export const ScorePolicy = z.strictObject({
  /** The name the record reports it under (e.g. "epoch-2"). */
  name: z.string().min(1),
  /** The adapter folder. */
  adapter: z.string().min(1),
  /** The folder must hash (sha256_tree) to this, or the run is refused before anything loads. */
  expected_sha256: Sha256.nullable().optional(),
});
export type ScorePolicy = z.infer<typeof ScorePolicy>;

export const ScoreSpec = z.strictObject({
  base_model: z.string().min(1),
  model_id: z.string().min(1).optional(),
  revision: z.string().min(1).nullable().optional(),
  local_files_only: z.boolean().default(false),
  method: TrainMethod.nullable().optional(),
  quantization: z.enum(["auto", "nf4", "none"]).default("auto"),
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  max_length: z.number().int().min(8).default(2048),
  eot_token: z.string().min(1).optional(),
  torch_threads: z.number().int().min(1).optional(),
  /** Pairs per forward (each holds 2 × batch_size sequences). */
  batch_size: z.number().int().min(1).default(2),
  /** Pairs JSONL (DpoPairLine per line). */
  pairs: z.string().min(1),
  /** The reference adapter folder (the DPO run's start); absent: the base model is the reference. */
  reference_adapter: z.string().min(1).optional(),
  expected_reference_adapter_sha256: Sha256.nullable().optional(),
  policies: z.array(ScorePolicy).min(1).max(64),
});
export type ScoreSpec = z.infer<typeof ScoreSpec>;

/** One policy over the pairs: mean log π − log π_ref of each side (nats per answer). */
export const ScoredPolicy = z.object({
  name: z.string(),
  adapter_sha256: Sha256,
  chosen_logp_delta: z.number(),
  rejected_logp_delta: z.number(),
  /** Share of pairs whose policy margin (chosen − rejected) exceeds the reference's. */
  margin_gain_rate: z.number().min(0).max(1),
  /** Set when the chosen answers' log-prob fell under the policy. */
  logp_warning: z.string().nullable(),
});
export type ScoredPolicy = z.infer<typeof ScoredPolicy>;

export const ScoreRecord = z.object({
  status: z.literal("succeeded"),
  method: TrainMethod,
  device: z.enum(["cpu", "cuda"]),
  pairs_sha256: Sha256,
  pair_count: z.number().int().min(0),
  /** "base" or "reference_adapter". */
  reference: z.string(),
  reference_adapter_sha256: Sha256.nullable(),
  /** Mean reference log-prob of each side (nats per answer). */
  ref_chosen_logp: z.number(),
  ref_rejected_logp: z.number(),
  policies: z.array(ScoredPolicy),
  wall_time_s: z.number(),
});
export type ScoreRecord = z.infer<typeof ScoreRecord>;
