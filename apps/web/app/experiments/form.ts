import {
  cpuDemoRecipe,
  DpoRecipe,
  GRADER_VERSION,
  GrpoRecipe,
  type ExperimentMethod,
  type GrpoRewardControl,
  LORA_DEFAULT_TARGETS,
  modelShape,
  type ExperimentConfigInput,
  type InspectModelSummary,
  type PairSource,
  type PromptVariant,
} from "@agentlab/core";

const DPO_DEFAULTS = DpoRecipe.parse({});
const GRPO_DEFAULTS = GrpoRecipe.parse({});

// The creation form's fields as strings (what inputs hold) and their translation into an
// ExperimentConfig input; kept pure so it is unit-tested without a browser.

export type ExperimentForm = {
  name: string;
  splitId: string;
  data: "teacher" | "dataset";
  providerId: string;
  datasetId: string;
  n: string;
  temperature: string;
  budget: string;
  baseModel: string;
  /** Hub branch, tag or commit (empty: main); ignored for a local folder. */
  baseRevision: string;
  epochs: string;
  /** Empty: the run is `epochs` passes. Set: exactly these optimizer steps, `epochs` snapshots. */
  trainSteps: string;
  learningRate: string;
  batchSize: string;
  /** Empty: batches of batchSize samples. Set: batches packed to at most these tokens. */
  batchTokens: string;
  maxLength: string;
  loraR: string;
  loraAlpha: string;
  loraDropout: string;
  targets: string;
  quantization: "auto" | "nf4" | "none";
  /** Activation checkpointing: the trainer's choice (on for real models), or forced on/off. */
  checkpointing: "auto" | "on" | "off";
  /** GPUs of one agent each seed trains on (training.gpus), and how they share the model. */
  gpus: string;
  parallel: "ddp" | "fsdp";
  /** What training's and evaluation's prompts show of the public context (recipe promptVariant). */
  trainPrompt: PromptVariant;
  evalPrompt: PromptVariant;
  maxNewTokens: string;
  /** Answers per task: 1 = one greedy answer; more are sampled at evalTemperature / evalTopP. */
  evalSamples: string;
  evalTemperature: string;
  evalTopP: string;
  /** Reuse answers earlier experiments stored under the same generation protocol. */
  reuseAnswers: boolean;
  graderVersion: string;
  seeds: string;
  /**
   * Plain SFT; SFT then DPO from execution-graded pairs (the dpo* fields), or its RFT control; or
   * SFT then online GRPO with the judge's verdicts as reward (the grpo* fields).
   */
  method: ExperimentMethod;
  /** Where the pairs come from; only cross_state (the recipe's default) sends no pairSources key. */
  dpoPairSources: PairSource[];
  dpoBeta: string;
  dpoRounds: string;
  /** Answers sampled per train task from the start policy (its failures are the rejected answers). */
  dpoSamples: string;
  dpoTemperature: string;
  dpoTopP: string;
  dpoSftWeight: string;
  dpoEpochs: string;
  /** Empty: the SFT rate ÷ DPO_LR_DIVISOR (what the server fills in). */
  dpoLearningRate: string;
  dpoBatchSize: string;
  dpoMarginThreshold: string;
  /** off (the default): every pair trains; drop / downweight: by the start policy's margin. */
  dpoMarginMode: "off" | "drop" | "downweight";
  dpoMarginFactor: string;
  /** as_graded (the default, sends no key), or the negative control: chosen and rejected exchanged. */
  dpoLabels: "as_graded" | "swapped";
  /** Optimizer steps of each seed's GRPO run, and a snapshot (dev-evaluated) every K of them. */
  grpoSteps: string;
  grpoSnapshotEverySteps: string;
  /** Completions per prompt: the group whose rewards are normalised together. */
  grpoNumGenerations: string;
  grpoPromptsPerStep: string;
  grpoLearningRate: string;
  grpoBeta: string;
  grpoTemperature: string;
  /** Empty: the evaluation's max new tokens. */
  grpoMaxCompletionLength: string;
  /** none, or the control: rewards shuffled within each group. */
  grpoRewardControl: GrpoRewardControl;
};

export const defaultForm: ExperimentForm = {
  name: "",
  splitId: "",
  data: "teacher",
  providerId: "",
  datasetId: "",
  n: "1",
  temperature: "0.8",
  budget: "",
  baseModel: "",
  baseRevision: "",
  epochs: "2",
  trainSteps: "",
  learningRate: "0.0002",
  batchSize: "4",
  batchTokens: "",
  maxLength: "2048",
  loraR: "16",
  loraAlpha: "32",
  loraDropout: "0.05",
  targets: LORA_DEFAULT_TARGETS.join(","),
  quantization: "auto",
  checkpointing: "auto",
  gpus: "1",
  parallel: "ddp",
  trainPrompt: "full",
  evalPrompt: "full",
  maxNewTokens: "512",
  evalSamples: "1",
  evalTemperature: "0.7",
  evalTopP: "0.95",
  reuseAnswers: true,
  graderVersion: GRADER_VERSION,
  seeds: "0, 1",
  // The dpo block's defaults as the recipe schema (core DpoRecipe) fills them.
  method: "sft",
  dpoPairSources: ["cross_state"],
  dpoBeta: String(DPO_DEFAULTS.beta),
  dpoRounds: String(DPO_DEFAULTS.rounds),
  dpoSamples: String(DPO_DEFAULTS.samples),
  dpoTemperature: String(DPO_DEFAULTS.temperature),
  dpoTopP: String(DPO_DEFAULTS.topP),
  dpoSftWeight: String(DPO_DEFAULTS.sftWeight),
  dpoEpochs: String(DPO_DEFAULTS.epochs),
  dpoLearningRate: "",
  dpoBatchSize: String(DPO_DEFAULTS.batchSize),
  dpoMarginThreshold: String(DPO_DEFAULTS.marginFilter.threshold),
  dpoMarginMode: DPO_DEFAULTS.marginFilter.mode,
  dpoMarginFactor: String(DPO_DEFAULTS.marginFilter.factor),
  dpoLabels: "as_graded",
  // The grpo block's defaults as the recipe schema (core GrpoRecipe: TRL's) fills them.
  grpoSteps: String(GRPO_DEFAULTS.steps),
  grpoSnapshotEverySteps: String(GRPO_DEFAULTS.snapshotEverySteps),
  grpoNumGenerations: String(GRPO_DEFAULTS.numGenerations),
  grpoPromptsPerStep: String(GRPO_DEFAULTS.promptsPerStep),
  grpoLearningRate: String(GRPO_DEFAULTS.learningRate),
  grpoBeta: String(GRPO_DEFAULTS.beta),
  grpoTemperature: String(GRPO_DEFAULTS.temperature),
  grpoMaxCompletionLength: "",
  grpoRewardControl: GRPO_DEFAULTS.rewardControl,
};

/**
 * The CPU demo preset (core demo/cpu-demo.ts) over the form: the prepared split and oracle, the
 * preset's training, evaluation and seeds, plain SFT on teacher data; the base model is filled in
 * when its warmed build ends. The rest of what the user typed stays.
 */
export function cpuDemoForm(cur: ExperimentForm, setup: { splitId: string; providerId: string }): ExperimentForm {
  const { training: t, evaluation, seeds } = cpuDemoRecipe();
  return {
    ...cur,
    name: cur.name.trim() || "CPU demo: the learnable family on the warmed tiny base",
    splitId: setup.splitId,
    data: "teacher",
    providerId: setup.providerId,
    n: "1",
    baseModel: "",
    baseRevision: "",
    epochs: String(t.epochs),
    trainSteps: "", // the preset trains by epochs, in batches of samples
    learningRate: String(t.learningRate),
    batchSize: String(t.batchSize),
    batchTokens: "",
    maxLength: String(t.maxLength),
    loraR: String(t.lora.r),
    loraAlpha: String(t.lora.alpha),
    loraDropout: String(t.lora.dropout),
    targets: t.lora.targets.join(","),
    quantization: t.quantization,
    checkpointing: "auto",
    gpus: "1",
    parallel: "ddp",
    trainPrompt: "full",
    evalPrompt: "full",
    maxNewTokens: String(evaluation.maxNewTokens),
    evalSamples: "1",
    graderVersion: evaluation.graderVersion,
    seeds: seeds.join(", "),
    method: "sft",
  };
}

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * Throws on a field that is not a number where one is needed; the server's zod schema checks the rest.
 * `facts`: what an agent found when it inspected the base model (the picker): its source, the hub
 * commit the revision resolved to (pinned, so every job loads the same weights) and its shape.
 */
export function toConfig(f: ExperimentForm, facts: InspectModelSummary | null = null): ExperimentConfigInput {
  const num = (label: string, v: string) => {
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n)) throw new Error(`${label} must be a number`);
    return n;
  };
  const seeds = list(f.seeds).map((s) => num("each seed", s));
  return {
    name: f.name.trim(),
    splitId: f.splitId,
    // The teacher recipe is part of the config either way; with a dataset it documents nothing new and is not run.
    teacher: {
      providerId: f.providerId,
      n: num("n", f.n),
      sampling: { temperature: num("temperature", f.temperature), top_p: 1, max_tokens: 2048 },
      ...(f.budget.trim() ? { budgetUsd: num("budget", f.budget) } : {}),
    },
    ...(f.data === "dataset" ? { datasetId: f.datasetId } : {}),
    baseModel: baseModel(f, facts),
    training: {
      epochs: num("epochs", f.epochs),
      learningRate: num("learning rate", f.learningRate),
      batchSize: num("batch size", f.batchSize),
      maxLength: num("max length", f.maxLength),
      // Empty sends no key, so such a recipe is what recipes were before these fields existed.
      ...(f.trainSteps.trim() ? { steps: num("training steps", f.trainSteps) } : {}),
      ...(f.batchTokens.trim() ? { batchTokens: num("batch tokens", f.batchTokens) } : {}),
      lora: {
        r: num("LoRA r", f.loraR),
        alpha: num("LoRA alpha", f.loraAlpha),
        dropout: num("LoRA dropout", f.loraDropout),
        targets: list(f.targets),
      },
      quantization: f.quantization,
      ...(f.checkpointing === "auto" ? {} : { gradientCheckpointing: f.checkpointing === "on" }),
      gpus: num("GPUs", f.gpus),
      parallel: f.parallel,
      ...promptVariant(f.trainPrompt),
    },
    evaluation: {
      maxNewTokens: num("max new tokens", f.maxNewTokens),
      graderVersion: f.graderVersion.trim(),
      ...evaluationSampling(f, num),
      ...promptVariant(f.evalPrompt),
    },
    seeds,
    ...methodFields(f, num),
  };
}

/**
 * sft sends no method block at all (the schema refuses one); sft+dpo and sft+rft send every field
 * of the dpo block, sft+grpo the grpo block's fields the form shows (the rest: TRL's defaults,
 * filled by the server).
 */
function methodFields(f: ExperimentForm, num: (label: string, v: string) => number) {
  if (f.method === "sft") return {};
  if (f.method === "sft+grpo")
    return {
      method: f.method,
      grpo: {
        steps: num("GRPO steps", f.grpoSteps),
        snapshotEverySteps: num("snapshot every (steps)", f.grpoSnapshotEverySteps),
        numGenerations: num("completions per prompt", f.grpoNumGenerations),
        promptsPerStep: num("prompts per step", f.grpoPromptsPerStep),
        learningRate: num("GRPO learning rate", f.grpoLearningRate),
        beta: num("KL β", f.grpoBeta),
        temperature: num("GRPO sampling temperature", f.grpoTemperature),
        ...(f.grpoMaxCompletionLength.trim()
          ? { maxCompletionLength: num("max completion length", f.grpoMaxCompletionLength) }
          : {}),
        rewardControl: f.grpoRewardControl,
      },
    };
  const defaultSources = f.dpoPairSources.length === 1 && f.dpoPairSources[0] === "cross_state";
  return {
    method: f.method,
    dpo: {
      ...(defaultSources ? {} : { pairSources: f.dpoPairSources }),
      ...(f.dpoLabels === "swapped" ? { labels: "swapped" as const } : {}),
      beta: num("β", f.dpoBeta),
      rounds: num("rounds", f.dpoRounds),
      samples: num("negative samples per task", f.dpoSamples),
      temperature: num("sampling temperature", f.dpoTemperature),
      topP: num("sampling top_p", f.dpoTopP),
      sftWeight: num("SFT term weight", f.dpoSftWeight),
      epochs: num("DPO epochs", f.dpoEpochs),
      ...(f.dpoLearningRate.trim() ? { learningRate: num("DPO learning rate", f.dpoLearningRate) } : {}),
      batchSize: num("DPO batch size", f.dpoBatchSize),
      marginFilter: {
        threshold: num("margin threshold", f.dpoMarginThreshold),
        mode: f.dpoMarginMode,
        factor: num("down-weight factor", f.dpoMarginFactor),
      },
    },
  };
}

function baseModel(f: ExperimentForm, facts: InspectModelSummary | null): ExperimentConfigInput["baseModel"] {
  const ref = f.baseModel.trim();
  const source = facts?.source ?? (ref.startsWith("/") || ref.startsWith(".") ? "path" : "hub");
  const revision = source === "hub" ? (facts?.revision ?? (f.baseRevision.trim() || undefined)) : undefined;
  return {
    source,
    ref,
    ...(revision ? { revision } : {}),
    ...(facts ? { shape: modelShape(facts) } : {}),
  };
}

/** One greedy answer per task, or n sampled ones (the protocol's samples, temperature and top_p). */
function evaluationSampling(f: ExperimentForm, num: (label: string, v: string) => number) {
  const samples = num("samples per task", f.evalSamples);
  const answerCache = f.reuseAnswers ? ("shared" as const) : ("experiment" as const);
  if (samples <= 1) return { samples: 1, decoding: { doSample: false, temperature: 1, topP: 1 }, answerCache };
  return {
    samples,
    decoding: { doSample: true, temperature: num("temperature", f.evalTemperature), topP: num("top_p", f.evalTopP) },
    answerCache,
  };
}

/** The full context sends no key, so such a recipe is what recipes were before variants existed. */
const promptVariant = (v: PromptVariant) => (v === "full" ? {} : { promptVariant: v });
