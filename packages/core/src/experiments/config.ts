import { z } from "zod";
import { NAME_MAX_LENGTH } from "../names";
import { SamplingParams } from "../teacher/schemas";
import { PROMPT_TEMPLATE_HASH, PromptVariant } from "../teacher/prompt";
import { ModelShape } from "../trainer/inspect";
import { TrainMethod } from "../trainer/schemas";
import { LORA_DEFAULT_TARGETS } from "../trainer/shared";
import { MarginFilter, PairSource } from "../preference/pairs";
import { GrpoRewardControl } from "../jobs/grpo";
import { GrpoEqualRewardGroups } from "../trainer/grpo";

// An experiment's full recipe (brief §2). Everything that influences a number in the report is
// here, so the stored config plus the frozen split reproduce the experiment.

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest");

/** The most answers per task an evaluation may ask for. */
export const MAX_SAMPLES = 64;

export const TeacherRecipe = z.object({
  providerId: z.string().uuid(),
  /** Candidates requested per train task. */
  n: z.number().int().min(1).max(64).default(1),
  sampling: SamplingParams.default(SamplingParams.parse({})),
  budgetUsd: z.number().min(0).optional(),
});
export type TeacherRecipe = z.infer<typeof TeacherRecipe>;

export const BaseModel = z.object({
  /** A local model folder or a hub id; the agent resolves it (tests and the demo use local folders). */
  source: z.enum(["path", "hub"]),
  ref: z.string().min(1).max(500),
  revision: z.string().max(200).optional(),
  /** The architecture's shape as an agent inspected it (the form's model picker): sizes the jobs' GPU memory. */
  shape: ModelShape.optional(),
});
export type BaseModel = z.infer<typeof BaseModel>;

export const TrainingConfig = z.object({
  lora: z
    .object({
      r: z.number().int().min(1).max(1024).default(16),
      alpha: z.number().positive().default(32),
      dropout: z.number().min(0).lt(1).default(0.05),
      targets: z
        .array(z.string().min(1))
        .min(1)
        .default([...LORA_DEFAULT_TARGETS]),
    })
    .default({ r: 16, alpha: 32, dropout: 0.05, targets: [...LORA_DEFAULT_TARGETS] }),
  epochs: z.number().int().min(1).max(50).default(2),
  learningRate: z.number().positive().max(1).default(2e-4),
  schedule: z.enum(["linear", "cosine", "constant"]).default("cosine"),
  batchSize: z.number().int().min(1).max(1024).default(4),
  gradAccum: z.number().int().min(1).max(1024).default(1),
  maxLength: z.number().int().min(8).max(131072).default(2048),
  quantization: z.enum(["auto", "nf4", "none"]).default("auto"),
  /**
   * The training method every seed uses. Resolved when the experiment is created (createExperiment)
   * so that it never depends on which agent claims a train job; the trainer refuses a job it
   * cannot run with exactly this method.
   */
  method: TrainMethod.optional(),
  /**
   * Activation checkpointing of every decoder layer. Absent: the trainer decides (on for
   * real models of >= 100 M parameters, off for the tiny CPU ones); true/false: exactly that.
   */
  gradientCheckpointing: z.boolean().optional(),
  /**
   * GPUs of one agent each seed's train job runs on: N > 1 is N DDP ranks under torchrun,
   * the global batch (batchSize x gradAccum) dealt across them, so the update is one GPU's; the
   * claim gives the job only to an agent with N free GPUs.
   */
  gpus: z.number().int().min(1).max(64).default(1),
  /**
   * How N > 1 ranks share the model: "ddp" (default) keeps a whole copy per GPU;
   * "fsdp" shards the parameters across the GPUs (torch FSDP2, one unit per decoder layer), for
   * bases that do not fit one GPU. The update is the same either way.
   */
  parallel: z.enum(["ddp", "fsdp"]).default("ddp"),
  /**
   * The prompts training shows (teacher/prompt.ts; optional rather than defaulted, so a stored recipe
   * parses and hashes as before): the SFT samples (re-rendered into a child snapshot), the DPO
   * rounds' sampling and pairs, the GRPO prompts; absent = the full public context.
   */
  promptVariant: PromptVariant.optional(),
  /**
   * Training length in optimizer steps (optional rather than defaulted, so a stored recipe parses
   * and hashes as before). Set: each seed's SFT run takes exactly this many steps, cycling through
   * the data in seeded shuffled passes (the last one may end mid-way), and `epochs` counts the
   * snapshots: the run is cut into `epochs` equal segments (the last takes the remainder), each
   * ending with a snapshot numbered like an epoch's. Arms with equal tokens but samples of different
   * lengths then take the same number of updates. Absent: `epochs` whole passes, a snapshot after each.
   */
  steps: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * Batches by tokens instead of samples (optional, not defaulted, like `steps`): samples in the
   * run's seeded order are packed into a micro-batch until the next would take its length sum
   * (each sample's length after truncation to maxLength) past this; a longer sample is a batch of
   * its own. Set, `batchSize` is not used by SFT (DPO and GRPO keep their own batch sizes);
   * `gradAccum` still multiplies. Each step then sees about the same tokens whatever the samples'
   * lengths. One GPU only: several ranks deal a window's samples by count, not by tokens.
   */
  batchTokens: z.number().int().min(8).optional(),
});
export type TrainingConfig = z.infer<typeof TrainingConfig>;

// ------------------------------------------------------------------ the preference half (sft+dpo)
// Everything that decides the pairs and the DPO weights is here, so the stored config reproduces
// them: how the start policy is sampled on train for rejected answers, the margin filter, and the
// DPO run's own schedule. Its jobs: jobs/recipe.ts (payload) and jobs/requirements.ts.

/**
 * sft+rft: the control of sft+dpo. The same stages and pairs, but its "DPO" jobs train the SFT term
 * on the chosen answers alone (objective rft: same steps, tokens and learning rate), so a DPO win
 * over it is a win of the preference term, not of more training.
 */
export const EXPERIMENT_METHODS = ["sft", "sft+dpo", "sft+rft", "sft+grpo"] as const;
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
  /**
   * Weight of an SFT term on the chosen answers; 0 = pure DPO. On by default: without it the margin
   * grows by pushing both answers down, the chosen one less (likelihood displacement).
   */
  sftWeight: z.number().min(0).max(100).default(1),
  epochs: z.number().int().min(1).max(50).default(2),
  /**
   * Absent: the SFT rate ÷ DPO_LR_DIVISOR, filled at creation (dpoRecipeOf). Under Adam the step size
   * is the learning rate's, not β's; a rate near the SFT one displaces the chosen answer.
   */
  learningRate: z.number().positive().max(1).optional(),
  /** Pairs per micro-batch (each forward holds 2 × batchSize sequences). */
  batchSize: z.number().int().min(1).max(1024).default(2),
  /** Off by default (see MarginFilter: the start margin does not change the step-1 loss); drop/downweight on request. */
  marginFilter: MarginFilter.default({ threshold: 0, mode: "off", factor: 0.25 }),
  /**
   * Where the pairs come from (core PairSource), each pair recording its own. Absent: cross_state
   * only, what recipes stored before the other sources meant; optional rather than defaulted, so a
   * stored recipe parses, and hashes (recipeHash), exactly as before.
   */
  /**
   * "swapped": the negative control, trained with every pair's chosen and rejected exchanged (the
   * held-out score keeps them as graded), so it must lose on dev. Optional for the same reason as
   * pairSources: absent = as graded, and a stored recipe hashes as before.
   */
  labels: z.enum(["as_graded", "swapped"]).optional(),
  pairSources: z
    .array(PairSource)
    .min(1)
    .refine((s) => new Set(s).size === s.length, "a pair source is named twice")
    .optional(),
});
export type DpoRecipe = z.infer<typeof DpoRecipe>;
export type DpoRecipeInput = z.input<typeof DpoRecipe>;

/** Methods with the preference half (the dpo block, its stages and jobs). */
export const hasPreferenceHalf = (method: ExperimentMethod | undefined): boolean =>
  method === "sft+dpo" || method === "sft+rft";

/** The recipe's pair sources; absent = cross_state, the one source there was before. */
export function pairSourcesOf(dpo: Pick<DpoRecipe, "pairSources">): PairSource[] {
  return dpo.pairSources ?? ["cross_state"];
}

/**
 * The default DPO learning rate is the SFT rate ÷ 30: the middle (in log scale) of the ÷10..÷100 range
 * of typical LoRA recipes (e.g. SFT 2e-4, DPO 5e-6..2e-5 for 1.5-7B models; docs/architecture.md).
 */
export const DPO_LR_DIVISOR = 30;

/**
 * The DPO settings of an sft+dpo recipe (defaults when the block was left out, the learning rate
 * from the SFT one when absent and the training block is given); null for plain SFT.
 */
export function dpoRecipeOf(config: {
  method?: ExperimentMethod;
  dpo?: DpoRecipe;
  training?: { learningRate?: number };
}): DpoRecipe | null {
  if (!hasPreferenceHalf(config.method)) return null;
  const dpo = config.dpo ?? DpoRecipe.parse({});
  const sft = config.training?.learningRate;
  if (dpo.learningRate !== undefined || sft === undefined) return dpo;
  return { ...dpo, learningRate: sft / DPO_LR_DIVISOR };
}

// ------------------------------------------------------------------ online RL (sft+grpo)
// GRPO from the dev-selected SFT start (the base competes) on the train tasks' prompts, rewarded by
// the agent's judge. Every GRPO setting is here with TRL 1.16's GRPOConfig default (trainer/grpo.ts
// names them), filled at creation, so the stored recipe is the protocol record. Jobs: jobs/recipe.ts
// (payload), jobs/requirements.ts.

/**
 * What dynamic sampling does. `passRateFilter`: before RL, the start policy answers every train task
 * numGenerations times (sampled and graded like the DPO rounds' train answers) and only tasks whose
 * pass rate lies strictly between 0 and 1 become prompts: a task it always or never solves gives
 * groups of equal rewards, zero advantage. `equalRewardGroups`: what the trainer does with a group
 * whose rewards still come out all equal during RL — "keep" (TRL's behaviour: zero advantage, its
 * tokens still in the loss's denominator), "filter" (left out of the loss), "resample" (its prompt
 * sampled again, up to maxResamples times; a group still equal after that is filtered).
 */
export const GrpoDynamicSampling = z.strictObject({
  passRateFilter: z.boolean().default(true),
  equalRewardGroups: GrpoEqualRewardGroups.default("filter"),
  maxResamples: z.number().int().min(1).max(16).default(2),
});
export type GrpoDynamicSampling = z.infer<typeof GrpoDynamicSampling>;

export const GrpoRecipe = z.strictObject({
  /** Optimizer steps of each seed's run (training length counted in steps). */
  steps: z.number().int().min(1).max(100_000).default(50),
  /** An adapter snapshot every K steps and at the last: the "epochs" dev evaluates. */
  snapshotEverySteps: z.number().int().min(1).max(100_000).default(10),
  /** Completions per prompt: the group whose rewards are normalised together. */
  numGenerations: z.number().int().min(2).max(64).default(8),
  promptsPerStep: z.number().int().min(1).max(256).default(1),
  learningRate: z.number().positive().max(1).default(1e-6),
  /** KL coefficient to the start policy; 0 = no reference model. */
  beta: z.number().min(0).max(100).default(0),
  lossType: z.enum(["dapo", "grpo", "dr_grpo", "bnpo"]).default("dapo"),
  scaleRewards: z.enum(["group", "batch", "none"]).default("group"),
  epsilon: z.number().positive().max(10).default(0.2),
  epsilonHigh: z.number().positive().max(10).default(0.28),
  maskTruncatedCompletions: z.boolean().default(true),
  /** Absent: the evaluation's maxNewTokens, so RL writes answers as long as dev and test read. */
  maxCompletionLength: z.number().int().min(1).max(32_768).optional(),
  temperature: z.number().positive().max(10).default(1),
  topP: z.number().gt(0).max(1).default(1),
  /** "shuffle_within_group": the control arm, rewards permuted within each group (core jobs/grpo.ts). */
  rewardControl: GrpoRewardControl.default("none"),
  /**
   * Dynamic sampling (DAPO): spend the RL steps on groups that carry a signal. Absent = off; optional
   * rather than defaulted, so a stored recipe parses, and hashes (recipeHash), exactly as before.
   */
  dynamicSampling: GrpoDynamicSampling.optional(),
});
export type GrpoRecipe = z.infer<typeof GrpoRecipe>;

/**
 * The GRPO settings of an sft+grpo recipe (defaults when the block was left out, the completion
 * length from the evaluation's when absent and the evaluation block is given); null otherwise.
 */
export function grpoRecipeOf(config: {
  method?: ExperimentMethod;
  grpo?: GrpoRecipe;
  evaluation?: { maxNewTokens?: number };
}): GrpoRecipe | null {
  if (config.method !== "sft+grpo") return null;
  const grpo = config.grpo ?? GrpoRecipe.parse({});
  const tokens = config.evaluation?.maxNewTokens;
  return grpo.maxCompletionLength !== undefined || tokens === undefined
    ? grpo
    : { ...grpo, maxCompletionLength: tokens };
}

/** What must be identical for base and adapter to be compared (brief §2 invariants). */
export const EvalProtocol = z.object({
  promptTemplateHash: Sha256.default(PROMPT_TEMPLATE_HASH),
  decoding: z
    .object({
      doSample: z.boolean().default(false),
      temperature: z.number().positive().default(1),
      topP: z.number().gt(0).max(1).default(1),
    })
    .default({ doSample: false, temperature: 1, topP: 1 }),
  maxNewTokens: z.number().int().min(1).max(32768).default(512),
  /**
   * Answers per task: 1 = one answer (greedy by default); n > 1 samples n answers per
   * prompt with `decoding` and the report compares per-task pass rates, with pass@k for k ≤ n.
   */
  samples: z.number().int().min(1).max(MAX_SAMPLES).default(1),
  /** Base seed of sampled decoding; the trainer derives each sample's seed from it and records it per answer. */
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(0),
  /**
   * "shared": answers stored by earlier experiments under the same generation cache key (task
   * prompt, model and adapter, this protocol, sample index) are reused instead of generated again.
   * "experiment": only this experiment's own stored answers count (every answer generated here).
   */
  answerCache: z.enum(["experiment", "shared"]).default("experiment"),
  graderVersion: z.string().min(1).max(200),
  /** Generation backend; every evaluation of the experiment uses it. */
  backend: z.enum(["transformers", "vllm"]).default("transformers"),
  /** "auto" is resolved once, when the experiment is created (never per claiming agent). */
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
  /** false: decoding is built from this recipe only; the checkpoint's generation_config is ignored. */
  checkpointGenerationConfig: z.boolean().default(false),
  /**
   * The prompts dev and test show, the same for base and adapters (recorded with every answer as
   * the prompt hash the protocol check compares); absent = the full public context.
   */
  promptVariant: PromptVariant.optional(),
});
export type EvalProtocol = z.infer<typeof EvalProtocol>;

export const ExperimentConfig = z
  .object({
    name: z.string().min(1).max(NAME_MAX_LENGTH),
    splitId: z.string().uuid(),
    teacher: TeacherRecipe,
    /** Reuse a verified SFT snapshot of this split instead of collecting new teacher data. */
    datasetId: z.string().uuid().optional(),
    baseModel: BaseModel,
    training: TrainingConfig.default(TrainingConfig.parse({})),
    evaluation: EvalProtocol,
    seeds: z
      .array(
        z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1),
      )
      .min(1)
      .max(16)
      .default([0]),
    /** Bootstrap settings of the report; the seed makes intervals reproducible. */
    bootstrap: z
      .object({
        iterations: z.number().int().min(100).max(100_000).default(10_000),
        seed: z.number().int().min(0).default(0),
      })
      .default({ iterations: 10_000, seed: 0 }),
    /** Printed on the report (e.g. the demo's tiny random model). */
    disclaimer: z.string().max(2000).optional(),
    /**
     * "sft" (also when absent, so recipes stored before DPO existed parse unchanged): the SFT experiment;
     * "sft+dpo": SFT, then preference training from execution-graded pairs; "sft+rft": the same with
     * the SFT term alone on the pairs' chosen answers (the control arm).
     */
    method: ExperimentMethod.optional(),
    /** The DPO settings; only with method "sft+dpo" (filled with defaults at creation when left out). */
    dpo: DpoRecipe.optional(),
    /** The GRPO settings; only with method "sft+grpo" (filled with defaults at creation when left out). */
    grpo: GrpoRecipe.optional(),
  })
  .refine((c) => new Set(c.seeds).size === c.seeds.length, { message: "seeds must be distinct", path: ["seeds"] })
  .refine((c) => c.training.gpus === 1 || c.training.method !== "lora-fp32", {
    message: "training.gpus > 1 needs a GPU method (lora-bf16 or qlora-nf4): lora-fp32 trains on the CPU",
    path: ["training", "gpus"],
  })
  .refine((c) => c.training.parallel !== "fsdp" || c.training.method !== "qlora-nf4", {
    message: 'training.parallel "fsdp" does not shard NF4-quantized bases (qlora-nf4): use lora-bf16 or ddp',
    path: ["training", "parallel"],
  })
  .refine((c) => c.training.steps === undefined || c.training.steps >= c.training.epochs, {
    message:
      "training.steps must be at least training.epochs: each of the epochs snapshots ends a segment of at least one step",
    path: ["training", "steps"],
  })
  .refine((c) => c.training.batchTokens === undefined || c.training.gpus === 1, {
    message:
      "training.batchTokens needs training.gpus = 1: several ranks deal a window's samples by count, not by tokens (use batchSize with several GPUs)",
    path: ["training", "batchTokens"],
  })
  .refine((c) => hasPreferenceHalf(c.method) || c.dpo === undefined, {
    message: 'dpo settings need method "sft+dpo" (or its control "sft+rft")',
    path: ["dpo"],
  })
  .refine((c) => c.method === "sft+grpo" || c.grpo === undefined, {
    message: 'grpo settings need method "sft+grpo"',
    path: ["grpo"],
  })
  // n greedy answers would be n copies of one answer: more samples than one need sampled decoding.
  .refine((c) => c.evaluation.samples === 1 || c.evaluation.decoding.doSample, {
    message: "samples > 1 needs sampled decoding (evaluation.decoding.doSample = true)",
    path: ["evaluation", "samples"],
  });
export type ExperimentConfig = z.infer<typeof ExperimentConfig>;
export type ExperimentConfigInput = z.input<typeof ExperimentConfig>;
