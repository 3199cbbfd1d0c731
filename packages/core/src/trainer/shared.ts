import { z } from "zod";

// Pieces of the trainer contract shared by several specs and records (schemas.ts: train, generate,
// tokenize, tiny-model; dpo.ts: preference training). Kept apart so that dpo.ts and schemas.ts
// import them without importing each other.

const ChatRole = z.enum(["system", "user", "assistant"]);
export const ChatMessage = z.strictObject({ role: ChatRole, content: z.string() });
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * The LoRA target modules when a recipe names none: every attention and MLP projection of the
 * Llama/Qwen2 families. The one definition: the experiment recipe, the form and the trainer's
 * JSON Schema default derive from it (the trainer's own DEFAULT_TARGETS is tied to it by
 * tests/test_spec_contract.py).
 */
export const LORA_DEFAULT_TARGETS = [
  "q_proj",
  "k_proj",
  "v_proj",
  "o_proj",
  "gate_proj",
  "up_proj",
  "down_proj",
] as const;

export const LoraConfig = z.strictObject({
  r: z.number().int().min(1).max(1024).default(16),
  alpha: z.number().positive().default(32),
  dropout: z.number().min(0).lt(1).default(0.05),
  target_modules: z
    .array(z.string().min(1))
    .min(1)
    .default([...LORA_DEFAULT_TARGETS]),
});
export type LoraConfig = z.infer<typeof LoraConfig>;

export const TrainMethod = z.enum(["qlora-nf4", "lora-bf16", "lora-fp32"]);
export type TrainMethod = z.infer<typeof TrainMethod>;

export const LrSchedule = z.enum(["linear", "cosine", "constant"]);
export type LrSchedule = z.infer<typeof LrSchedule>;

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * The fields `train` and `dpo` share with one meaning and one default (the Python side: dpo's
 * DPO_DEFAULTS builds on train's TRAIN_DEFAULTS; tests/test_spec_contract.py ties both to these).
 * Learning rate and batch size differ by command and stay with each spec.
 */
export const TRAINING_RUN_FIELDS = {
  /** Local model folder or hub id (the trainer never downloads in tests). */
  base_model: z.string().min(1),
  /** Name recorded in the run record; defaults to base_model. */
  model_id: z.string().min(1).optional(),
  output_dir: z.string().min(1),
  lora: LoraConfig.default(LoraConfig.parse({})),
  epochs: z.number().int().min(1).default(1),
  lr_schedule: LrSchedule.default("cosine"),
  warmup_ratio: z.number().min(0).max(1).default(0),
  warmup_steps: z.number().int().min(0).optional(),
  grad_accum: z.number().int().min(1).default(1),
  max_length: z.number().int().min(8).default(2048),
  seed: z.number().int().min(0).default(0),
  weight_decay: z.number().min(0).default(0),
  max_grad_norm: z.number().min(0).default(1),
  /** auto: NF4 QLoRA when CUDA and bitsandbytes exist, plain LoRA otherwise. */
  quantization: z.enum(["auto", "nf4", "none"]).default("auto"),
  /** When set, exactly this method is used or the run is refused (experiments resolve it at creation). */
  method: TrainMethod.nullable().optional(),
  /** Hub revision (branch, tag or commit) of base_model; ignored for a local folder. */
  revision: z.string().min(1).nullable().optional(),
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  /** End-of-turn token; found from the chat template when absent. */
  eot_token: z.string().min(1).optional(),
  log_every_steps: z.number().int().min(1).default(1),
  torch_threads: z.number().int().min(1).optional(),
  local_files_only: z.boolean().default(false),
};

export const TrainerEnvironment = z.object({
  python: z.string(),
  platform: z.string(),
  torch: z.string(),
  cuda: z.string().nullable(),
  cuda_available: z.boolean(),
  driver: z.string().nullable(),
  gpus: z.array(z.object({ index: z.number().int(), name: z.string(), memory_mb: z.number() })),
  transformers: z.string().nullable(),
  peft: z.string().nullable(),
  trl: z.string().nullable(),
  bitsandbytes: z.string().nullable(),
  vllm: z.string().nullable(),
  cpu_count: z.number().int().nullable(),
  torch_threads: z.number().int(),
});
export type TrainerEnvironment = z.infer<typeof TrainerEnvironment>;

export const AdapterSnapshot = z.object({
  epoch: z.number().int().min(1),
  path: z.string(),
  /** sha256 over sorted relative paths + contents of the snapshot folder. */
  sha256: Sha256,
  files: z.array(z.string()),
  train_loss: z.number(),
  eval_loss: z.number().nullable(),
  step: z.number().int(),
});
export type AdapterSnapshot = z.infer<typeof AdapterSnapshot>;

const version = z.string().nullable();
/** What the trainer venv's doctor snippet prints (apps/agent/src/trainer/python.ts); a missing key reads as not installed. */
export const TrainerDoctor = z.object({
  python: version.default(null),
  torch: version.default(null),
  cuda: version.default(null),
  cudaAvailable: z.boolean().default(false),
  transformers: version.default(null),
  peft: version.default(null),
  trl: version.default(null),
  bitsandbytes: version.default(null),
  vllm: version.default(null),
  agentlabTrainer: version.default(null),
});
export type TrainerDoctor = z.infer<typeof TrainerDoctor>;
