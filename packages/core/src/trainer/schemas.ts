import { z } from "zod";
import { DpoSpec } from "./dpo";
import { EpisodePolicyTrainerSpec } from "./episode-policy";
import { GrpoSpec } from "./grpo";
import { ScoreSpec } from "./score";
import { InspectModelSpec } from "./inspect";
import { AdapterSnapshot, ChatMessage, Sha256, TrainerEnvironment, TRAINING_RUN_FIELDS, TrainMethod } from "./shared";

export { AdapterSnapshot, ChatMessage, LoraConfig, LrSchedule, TrainerEnvironment, TrainMethod } from "./shared";

// Contract between the TS agent and the Python trainer (architecture brief §6).
// Specs are written as JSON files and passed as `python -m agentlab_trainer <command> --spec FILE`;
// the trainer answers with JSON lines on stdout, each one a TrainerEvent (events.ts). Keys are snake_case on
// both sides, like the task format.

export const TrainerCommand = z.enum([
  "tiny-model",
  "train",
  "dpo",
  "grpo",
  "score",
  "generate",
  "tokenize",
  "inspect-model",
  "episode-policy",
]);
export type TrainerCommand = z.infer<typeof TrainerCommand>;

/** Exit codes of the trainer CLI. */
export const TRAINER_EXIT = { ok: 0, internal: 1, usage: 2, userError: 3, canceled: 143 } as const;

/**
 * A message of an SFT sample. `train: false` on an assistant turn keeps it in the context the later
 * turns read but leaves it unsupervised (a trajectory's failed attempt); every other assistant
 * turn is supervised, as before the flag existed.
 */
export const SftMessage = z
  .strictObject({ ...ChatMessage.shape, train: z.literal(false).optional() })
  .refine((m) => m.train === undefined || m.role === "assistant", {
    message: "only an assistant turn can be left unsupervised (train: false)",
    path: ["train"],
  });
export type SftMessage = z.infer<typeof SftMessage>;

/** One SFT sample: a line of the dataset JSONL. */
export const SftSample = z.object({ messages: z.array(SftMessage).min(1) });
export type SftSample = z.infer<typeof SftSample>;

// ------------------------------------------------------------------ specs
// Specs (and the chat messages in them) are strict: a key the trainer does not know is refused, on
// the Node side by these schemas and in Python by the JSON Schema generated from them
// (scripts/gen-trainer-schemas.ts → agentlab_trainer/schemas/*.json).

export const TinyModelSpec = z.strictObject({
  output_dir: z.string().min(1),
  /** Text files, or task pools (.jsonl / .jsonl.gz, Task spec v1) whose code and tests are used. */
  corpus: z.array(z.string().min(1)).min(1),
  /** Only these tasks of a pool corpus feed the tokenizer (experiments: the split's train part). */
  train_task_ids: z.array(z.string().min(1)).optional(),
  arch: z.enum(["llama", "qwen2"]).default("llama"),
  seed: z.number().int().min(0).default(0),
  vocab_size: z.number().int().min(300).max(65536).default(2048),
  hidden_size: z.number().int().positive().default(128),
  intermediate_size: z.number().int().positive().default(256),
  num_layers: z.number().int().positive().default(2),
  num_heads: z.number().int().positive().default(4),
  num_kv_heads: z.number().int().positive().default(2),
  max_position_embeddings: z.number().int().positive().default(2048),
  /** Rebuild even when the folder's stamp matches. */
  force: z.boolean().default(false),
  /**
   * A short full-parameter warm-up of the random model before it is saved, so that it
   * writes parseable answers; the caller builds `dataset` from train-split text only and names the
   * tasks it used. Recorded in the stamp and agentlab-warmup.json.
   */
  warmup: z
    .strictObject({
      dataset: z.string().min(1),
      task_ids: z.array(z.string().min(1)),
      description: z.string().max(2000),
      steps: z.number().int().min(1).max(100_000).optional(),
      learning_rate: z.number().positive().max(1).optional(),
      batch_size: z.number().int().min(1).max(1024).optional(),
      seed: z.number().int().min(0).optional(),
      max_length: z.number().int().min(8).optional(),
      /** Loss on the whole sample, prompt included (default), or on the answer only. */
      full_sequence: z.boolean().optional(),
    })
    .optional(),
});
export type TinyModelSpec = z.infer<typeof TinyModelSpec>;

export const TrainSpec = z.strictObject({
  ...TRAINING_RUN_FIELDS,
  /** SFT JSONL: one SftSample per line. */
  dataset: z.string().min(1),
  eval_dataset: z.string().min(1).optional(),
  learning_rate: z.number().positive().default(2e-4),
  batch_size: z.number().int().min(1).default(4),
  eval_batch_size: z.number().int().min(1).optional(),
  /**
   * Exactly this many optimizer steps over seeded shuffled passes of the data (the last pass may end
   * mid-way); `epochs` is then the number of snapshots, one ending each of `epochs` equal segments
   * (the last takes the remainder), numbered 1..epochs. Absent: `epochs` whole passes.
   */
  steps: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * Micro-batches packed by tokens: samples in the run's seeded order while their lengths (after
   * max_length) sum to at most this, a longer sample alone; batch_size is then unused for training.
   * One process only (world_size 1).
   */
  batch_tokens: z.number().int().min(8).optional(),
  /**
   * Non-reentrant activation checkpointing of every decoder layer. Absent or null: on
   * for real models (>= 100 M base parameters), off for the tiny CPU ones.
   */
  gradient_checkpointing: z.boolean().nullable().optional(),
  /**
   * Ranks of the run. 1: one process. N > 1: the trainer runs itself under torchrun with
   * N processes, one GPU each (DDP; the loss normalized by the supervised tokens of every rank, so
   * the update is one process's on the same global batch). The agent runs N > 1 only with N GPUs,
   * or as N gloo CPU processes under its AGENTLAB_TRAIN_CPU_RANKS=1 (tests).
   */
  world_size: z.number().int().min(1).max(64).default(1),
  /**
   * With world_size > 1: "ddp" (a whole model per rank) or "fsdp" (parameters sharded per decoder
   * layer, torch FSDP2; rank 0 gathers the LoRA adapter alone to write each snapshot).
   */
  parallel: z.enum(["ddp", "fsdp"]).default("ddp"),
  /**
   * Continue a lost run after its epoch `epoch`: the adapter folder and the trainer state folder
   * (optimizer, schedule, RNG, counters) that epoch left, and the snapshots of epochs 1..epoch,
   * which the record lists first. One-process runs only; the state must be this run's.
   */
  resume: z
    .strictObject({
      epoch: z.number().int().min(1),
      adapter: z.string().min(1),
      state: z.string().min(1),
      snapshots: z.array(AdapterSnapshot),
    })
    .optional(),
});
export type TrainSpec = z.infer<typeof TrainSpec>;

export const GeneratePrompt = z.strictObject({ task_id: z.string().min(1), messages: z.array(ChatMessage).min(1) });
export type GeneratePrompt = z.infer<typeof GeneratePrompt>;

export const GenerateSpec = z.strictObject({
  base_model: z.string().min(1),
  /** Adapter snapshot folder (e.g. <out>/epoch-2); absent for the base model. */
  adapter: z.string().min(1).optional(),
  prompts: z.array(GeneratePrompt),
  max_new_tokens: z.number().int().min(1).default(512),
  /** false = greedy (the default for evaluation); implied by samples > 1. */
  do_sample: z.boolean().default(false),
  /**
   * Answers per prompt. 1: one answer, greedy unless do_sample. More: sampled with
   * temperature and top_p, sample i of a task seeded with taskSeed(seed, task_id) + i (recorded in
   * its generation event), independent of batching.
   */
  samples: z.number().int().min(1).max(1024).default(1),
  temperature: z.number().positive().default(1),
  top_p: z.number().gt(0).max(1).default(1),
  /** Base seed; each sample's own seed derives from it and the task id. */
  seed: z.number().int().min(0).default(0),
  /** Sequences decoded together (a prompt's samples count each; a batch holds at least one prompt). */
  batch_size: z.number().int().min(1).default(8),
  backend: z.enum(["auto", "transformers", "vllm"]).default("auto"),
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  /** auto: bfloat16 on CUDA, float32 on CPU. */
  dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
  /** false: decoding comes from this spec only; the checkpoint's generation_config is not applied. */
  use_checkpoint_generation_config: z.boolean().default(false),
  /** The adapter folder must hash (sha256_tree) to this, or generation is refused before loading. */
  expected_adapter_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable()
    .optional(),
  revision: z.string().min(1).nullable().optional(),
  eot_token: z.string().min(1).optional(),
  local_files_only: z.boolean().default(false),
});
export type GenerateSpec = z.infer<typeof GenerateSpec>;

export const TokenizeSpec = z.strictObject({
  model: z.string().min(1),
  dataset: z.string().min(1),
  max_length: z.number().int().min(8).optional(),
  eot_token: z.string().min(1).optional(),
  local_files_only: z.boolean().default(false),
});
export type TokenizeSpec = z.infer<typeof TokenizeSpec>;

/** Spec type by command, for `runPython`. */
export type TrainerSpecs = {
  "tiny-model": z.input<typeof TinyModelSpec>;
  train: z.input<typeof TrainSpec>;
  dpo: z.input<typeof DpoSpec>;
  grpo: z.input<typeof GrpoSpec>;
  score: z.input<typeof ScoreSpec>;
  generate: z.input<typeof GenerateSpec>;
  tokenize: z.input<typeof TokenizeSpec>;
  "inspect-model": z.input<typeof InspectModelSpec>;
  "episode-policy": z.input<typeof EpisodePolicyTrainerSpec>;
};

// ------------------------------------------------------------------ records

/** The run record of a train job (brief §6), carried by its result event. */
export const RunRecord = z.object({
  status: z.enum(["succeeded", "canceled"]),
  method: TrainMethod,
  device: z.enum(["cpu", "cuda"]),
  config: z.record(z.string(), z.unknown()),
  dataset_sha256: Sha256,
  eval_dataset_sha256: Sha256.nullable(),
  chat_template_sha256: Sha256,
  model: z.object({ id: z.string(), path: z.string(), weights_sha256: Sha256.nullable() }),
  seed: z.number().int(),
  eot_token: z.string(),
  samples: z.number().int(),
  eval_samples: z.number().int(),
  supervised_tokens_per_epoch: z.number().int(),
  trainable_parameters: z.number().int(),
  /** Whether the run checkpointed activations (the spec's choice or its default); absent in older records. */
  gradient_checkpointing: z.boolean().optional(),
  /** The ranks the run trained with (spec.world_size); absent in records from before multi-GPU training. */
  world_size: z.number().int().min(1).optional(),
  /** How several ranks shared the model (spec.parallel); null for one process, absent in older records. */
  parallel: z.enum(["ddp", "fsdp"]).nullable().optional(),
  total_steps: z.number().int(),
  steps: z.number().int(),
  epochs_completed: z.number().int(),
  snapshots: z.array(AdapterSnapshot),
  /** The epoch a lost run was resumed after (its earlier snapshots came from that run); absent: trained from step 0. */
  resumed_from_epoch: z.number().int().min(1).optional(),
  final_train_loss: z.number().nullable(),
  final_eval_loss: z.number().nullable(),
  started_at: z.string(),
  finished_at: z.string(),
  train_time_s: z.number(),
  wall_time_s: z.number(),
  supervised_tokens: z.number().int(),
  supervised_tokens_per_s: z.number(),
  total_tokens_per_s: z.number(),
  peak_memory_mb: z.number(),
  environment: TrainerEnvironment,
  pip_freeze: z.array(z.string()),
});
export type RunRecord = z.infer<typeof RunRecord>;

export const GenerateSummary = z.object({
  backend: z.enum(["transformers", "vllm"]),
  /** The backend library's version (transformers or vllm). */
  backend_version: z.string().min(1),
  dtype: z.enum(["float32", "bfloat16"]),
  device: z.enum(["cpu", "cuda"]),
  /** Tokens that end a completion, as text. */
  stop: z.array(z.string()),
  /** "recipe": decoding built only from the spec; "checkpoint": the model's generation_config applied. */
  generation_config: z.enum(["recipe", "checkpoint"]),
  /** revision: resolved hub commit (null for a local folder); weights_sha256: the folder's weight files. */
  model: z.object({ ref: z.string(), revision: z.string().nullable(), weights_sha256: Sha256.nullable() }),
  count: z.number().int(),
  base_model: z.string(),
  adapter: z.string().nullable(),
  adapter_sha256: Sha256.nullable(),
  decoding: z.object({
    do_sample: z.boolean(),
    /** Answers per prompt (count × samples generation events). */
    samples: z.number().int().min(1),
    temperature: z.number(),
    top_p: z.number(),
    seed: z.number().int(),
    max_new_tokens: z.number().int(),
  }),
  chat_template_sha256: Sha256,
  /** sha256 over (task id, prompt token ids): the prompts as rendered (fixed date) and tokenized; absent in older results. */
  prompts_sha256: Sha256.optional(),
  /** Each task's prompt hash (sha256 of its prompt token ids); the protocol compares it across models task by task. Absent in older results. */
  task_prompts_sha256: z.record(z.string(), Sha256).optional(),
  /** The vLLM venv's own library versions (vllm, torch, transformers); null for transformers in-process. */
  backend_environment: z.record(z.string(), z.string()).nullable().optional(),
  completion_tokens: z.number().int(),
  /** Completion tokens per second of generation, model loading excluded. */
  tokens_per_s: z.number(),
  wall_time_s: z.number(),
  peak_memory_mb: z.number(),
  environment: TrainerEnvironment,
});
export type GenerateSummary = z.infer<typeof GenerateSummary>;

export const TokenizeSummary = z.object({
  samples: z.number().int(),
  supervised_tokens: z.number().int(),
  total_tokens: z.number().int(),
  max_tokens: z.number().int(),
  per_sample_supervised: z.array(z.number().int()),
  /** Set when the pre-flight checks would refuse this dataset for training. */
  preflight_error: z.object({ message: z.string() }).nullable(),
  eot_token: z.string(),
  max_length: z.number().int().nullable(),
  dataset_sha256: Sha256,
  chat_template_sha256: Sha256,
  /** Each sample's full length in tokens, before any truncation (absent from older agents). */
  sample_tokens: z.array(z.number().int()).optional(),
  /** Indices (line order) of the samples longer than max_length: truncation would cut their answer. */
  over_length: z.array(z.number().int()).optional(),
});
export type TokenizeSummary = z.infer<typeof TokenizeSummary>;

export const TinyModelSummary = z.object({
  path: z.string(),
  cached: z.boolean(),
  key: Sha256,
  arch: z.enum(["llama", "qwen2"]),
  config: z.record(z.string(), z.unknown()),
  corpus_sha256: z.array(Sha256),
  vocab_size: z.number().int(),
  parameters: z.number().int(),
  weights_sha256: Sha256.nullable(),
  chat_template_sha256: Sha256,
  build_s: z.number(),
  /** What the warm-up trained on (absent or null: none ran). */
  warmup: z
    .object({
      dataset_sha256: Sha256,
      samples: z.number().int(),
      steps: z.number().int(),
      final_loss: z.number(),
      task_ids: z.array(z.string()),
      description: z.string(),
    })
    .passthrough()
    .nullable()
    .optional(),
});
export type TinyModelSummary = z.infer<typeof TinyModelSummary>;
