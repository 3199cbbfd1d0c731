import { z } from "zod";
import { DomainError } from "../errors";
import { CollectionState, ProviderKind } from "../teacher/schemas";
import { TrainMethod } from "../trainer/schemas";
import { ChosenSource, FailingLayer, PairSource, RejectedSource } from "../preference/pairs";
import { GrpoPromptFilterCounts } from "./grpo-filter";
import { ModelRef } from "./selection";
import type { StageKind } from "./stages";

// What each stage kind records in experiment_stages.output: the runner's only state, so a
// restarted server resumes from it. One schema per kind; handlers return the typed value and
// readers parse it (a stored record that no longer fits fails with the stage and field named
// instead of reading as undefined). Fields are optional where a running stage records them step
// by step.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

const CollectionSummary = z.object({
  collectionId: z.string().uuid(),
  collectionState: CollectionState,
  stopReason: z.string().nullable(),
  provider: ProviderKind,
  model: z.string(),
  tasks: z.number().int(),
  samplesTotal: z.number().int(),
  samplesDone: z.number().int(),
  samplesFailed: z.number().int(),
  reusedCandidates: z.number().int(),
  costUsd: z.number(),
  costSavedUsd: z.number(),
  tokensIn: z.number().int(),
  tokensOut: z.number().int(),
});

/** collect/verify when the recipe reuses an existing snapshot (config.datasetId): nothing to do. */
const Reused = z.object({ reusedDatasetId: z.string().uuid() });

const DroppedSample = z.object({
  ordinal: z.number().int(),
  taskKey: z.string(),
  verdict: z.string(),
  reasons: z.array(z.string()),
});

export const CollectOutput = z.union([Reused, CollectionSummary]);
export const VerifyOutput = z.union([
  Reused,
  CollectionSummary.extend({
    verdicts: z.record(z.string(), z.number().int()),
    grading: z.boolean().optional(),
    draftDatasetId: z.string().uuid().optional(),
    replayId: z.string().uuid().optional(),
    kept: z.number().int().nullable().optional(),
    dropped: z.array(DroppedSample).optional(),
    resultDatasetId: z.string().uuid().optional(),
  }),
]);

export const DatasetOutput = z.object({
  datasetId: z.string().uuid(),
  datasetHash: Sha256,
  samples: z.number().int(),
  tasks: z.number().int(),
  reusedDataset: z.boolean().optional(),
  // Provenance when the teacher module built the data (absent when a snapshot was reused).
  collectionId: z.string().uuid().nullable().optional(),
  draftDatasetId: z.string().uuid().nullable().optional(),
  replayId: z.string().uuid().nullable().optional(),
  replayDropped: z.number().int().optional(),
  reusedCandidates: z.number().int().optional(),
  costUsd: z.number().optional(),
  costSavedUsd: z.number().optional(),
  oracleSamples: z.number().int().optional(),
  /** Samples longer than training.maxLength with the base tokenizer, dropped before training. */
  overLength: z
    .object({
      model: z.string(),
      maxLength: z.number().int(),
      measuredDatasetId: z.string().uuid(),
      count: z.number().int(),
      taskIds: z.array(z.string()),
      longestTokens: z.number().int().nullable(),
    })
    .optional(),
});

// `artifact`: the archive of the snapshot in the artifact store, which any agent can fetch.
export const RecordedSnapshot = z.object({
  epoch: z.number().int().min(1),
  path: z.string(),
  sha256: z.string(),
  artifact: z.string().nullable().optional(),
});
export type RecordedSnapshot = z.infer<typeof RecordedSnapshot>;

export const TrainOutput = z.object({
  jobId: z.string().optional(),
  snapshots: z.array(RecordedSnapshot).optional(),
  method: TrainMethod.optional(),
});

// Loose on purpose: the evaluation's progress book (apps/web/server/experiments/evaluate.ts) may
// carry more than these keys, and a resumed stage must write back everything it read.
export const EvalOutput = z.looseObject({
  /** Generate job id per model key. */
  generate: z.record(z.string(), z.string()).default({}),
  /** Per model key, once its answers are all graded or given up on. */
  done: z.record(z.string(), z.object({ graded: z.number().int(), noVerdict: z.number().int() })).default({}),
  /** How often a failed generate job was replaced on resume, per model key. */
  regenerate: z.record(z.string(), z.number().int()).optional(),
  /** Answers copied from the shared answer cache instead of generated, per model key. */
  reused: z.record(z.string(), z.number().int()).optional(),
  /** test_eval only: the models claimed for the once-only test run. */
  models: z.array(ModelRef).optional(),
});

export const SelectOutput = z.object({
  selected: ModelRef,
  outcome: z.enum(["adapter_selected", "base_kept"]),
  devTasksExcludedNoVerdict: z.number().int(),
});

export const ReportOutput = z.object({ reportId: z.string().uuid() });

// The outputs of the sft+dpo stages.

/** An adapter a job loads: its tree hash, its folder on the agent that made it, its archive. */
const AdapterRef = z.object({ path: z.string(), sha256: Sha256, artifact: z.string().nullable() });

/** A round's start policy: the base or an SFT epoch (round 1), or the previous round's dev-best DPO epoch. */
export const DpoStartOutput = z.object({
  round: z.number().int().min(1),
  start: ModelRef,
  label: z.string(),
  /** null: the base (DPO trains a fresh LoRA on it, whose reference is the base). */
  adapter: AdapterRef.nullable(),
  trainingMethod: TrainMethod.nullable(),
  reason: z.string(),
});

/** The start policy's answers on train (an evaluation's progress book) and which policy wrote them. */
export const SampleOutput = EvalOutput.extend({
  round: z.number().int().min(1).optional(),
  policy: ModelRef.optional(),
  modelKey: z.string().optional(),
});

const Margins = z.object({
  n: z.number().int(),
  min: z.number(),
  median: z.number(),
  mean: z.number(),
  max: z.number(),
});

/** core pairStats: counts by failing layer and source, margins before training (kept and filtered out). */
export const PairStatsOutput = z.object({
  kept: z.number().int(),
  dropped: z.number().int(),
  downweighted: z.number().int(),
  byFailingLayer: z.partialRecord(FailingLayer, z.number().int()),
  byChosenSource: z.partialRecord(ChosenSource, z.number().int()),
  byRejectedSource: z.partialRecord(RejectedSource, z.number().int()),
  /** Absent in outputs from before pairs recorded their source (all cross_state then). */
  byPairSource: z.partialRecord(PairSource, z.number().int()).optional(),
  tasks: z.number().int(),
  marginKept: Margins.nullable(),
  marginDropped: Margins.nullable(),
});

export const PairsOutput = z.object({
  round: z.number().int().min(1),
  policy: ModelRef,
  /** Pairs built from the graded answers, before the margin filter. */
  built: z.number().int().optional(),
  /** Answers left out when building (core buildPairs), by reason. */
  skipped: z.record(z.string(), z.number().int()).optional(),
  /** Train tasks without any pair (the policy passed every sample, or no rejected answer differed). */
  tasksWithoutPairs: z.number().int().optional(),
  /** The built pairs' JSONL (blob) that the score job read, and that job. */
  builtHash: Sha256.optional(),
  scoreJobId: z.string().optional(),
  /** After the filter: the pairs DPO trains on (JSONL blob), how many rows were stored, and their statistics. */
  pairsHash: Sha256.optional(),
  stored: z.number().int().optional(),
  stats: PairStatsOutput.optional(),
});

export const DpoSnapshotOutput = RecordedSnapshot.extend({
  rewardMargin: z.number(),
  preferenceAccuracy: z.number(),
});
export type DpoSnapshotOutput = z.infer<typeof DpoSnapshotOutput>;

/** One epoch snapshot scored on the held-out dev pairs: mean Δ log-prob of each side against the start. */
export const HeldOutEpoch = z.object({
  epoch: z.number().int(),
  chosenLogpDelta: z.number(),
  rejectedLogpDelta: z.number(),
  marginGainRate: z.number(),
  warning: z.string().nullable(),
});
export type HeldOutEpoch = z.infer<typeof HeldOutEpoch>;

/** The score job on held-out dev pairs (never trained on); `note` says why nothing was scored. */
export const HeldOutScore = z.object({
  pairs: z.number().int(),
  tasks: z.number().int(),
  pairsHash: z.string().optional(),
  jobId: z.string().optional(),
  epochs: z.array(HeldOutEpoch).optional(),
  note: z.string().optional(),
});
export type HeldOutScore = z.infer<typeof HeldOutScore>;

export const DpoOutput = z.object({
  round: z.number().int().min(1),
  jobId: z.string().optional(),
  start: ModelRef.optional(),
  method: TrainMethod.optional(),
  pairCount: z.number().int().optional(),
  snapshots: z.array(DpoSnapshotOutput).optional(),
  /** Absent in outputs from before held-out scoring. */
  heldOut: HeldOutScore.optional(),
});

// The output of the sft+grpo stage.

export const GrpoSnapshotOutput = RecordedSnapshot.extend({ step: z.number().int(), rewardMean: z.number() });
export type GrpoSnapshotOutput = z.infer<typeof GrpoSnapshotOutput>;

/**
 * The start policy's answers on train for GRPO's pass-rate filter (an evaluation's progress book),
 * which policy wrote them and, once graded, the filter's counts and the kept tasks.
 */
export const GrpoSampleOutput = EvalOutput.extend({
  start: ModelRef.optional(),
  startLabel: z.string().optional(),
  startReason: z.string().optional(),
  modelKey: z.string().optional(),
  filter: GrpoPromptFilterCounts.optional(),
  /** The train tasks kept as prompts (0 < pass rate < 1), sorted. */
  kept: z.array(z.string()).optional(),
});

/** A seed's GRPO run: its start (dev selection among base and SFT), the train prompts stored, the run's audit totals. */
export const GrpoOutput = z.object({
  start: ModelRef,
  startLabel: z.string(),
  startReason: z.string(),
  /** null: the base (a fresh LoRA on it). */
  adapter: AdapterRef.nullable(),
  /** Train prompts stored for the run (grpo_prompts; the database refuses any other part). */
  prompts: z.number().int(),
  /** With the pass-rate filter: its counts (grpo_sample's), so the run records what it was trained on. */
  promptFilter: GrpoPromptFilterCounts.optional(),
  jobId: z.string().optional(),
  method: TrainMethod.optional(),
  snapshots: z.array(GrpoSnapshotOutput).optional(),
  steps: z.number().int().optional(),
  gradedCompletions: z.number().int().optional(),
  maskedGroups: z.number().int().optional(),
  /** Completions the judge flagged over the run: tampered, timeout, resource_limit, unparseable. */
  audit: z.record(z.string(), z.number().int()).optional(),
  trainTimeS: z.number().optional(),
  gradeTimeS: z.number().optional(),
});

export const STAGE_OUTPUTS = {
  collect: CollectOutput,
  verify: VerifyOutput,
  dataset: DatasetOutput,
  train: TrainOutput,
  dev_eval: EvalOutput,
  select: SelectOutput,
  test_eval: EvalOutput,
  report: ReportOutput,
  dpo_start: DpoStartOutput,
  sample: SampleOutput,
  pairs: PairsOutput,
  dpo: DpoOutput,
  grpo_sample: GrpoSampleOutput,
  grpo: GrpoOutput,
} as const satisfies { [K in StageKind]: z.ZodType };

export type StageOutputs = { [K in StageKind]: z.infer<(typeof STAGE_OUTPUTS)[K]> };
/** The column's type: what any stage may have recorded ({} before its first step). */
export type StageOutput = StageOutputs[StageKind] | Record<string, never>;

/**
 * The recorded output of a stage of kind `kind`, parsed; undefined when the stage has recorded
 * nothing yet. Throws PRECONDITION_FAILED naming the stage and the field when the record does not fit.
 */
export function parseStageOutput<K extends StageKind>(kind: K, key: string, raw: unknown): StageOutputs[K] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "object" && Object.keys(raw).length === 0) return undefined;
  const parsed = STAGE_OUTPUTS[kind].safeParse(raw);
  if (parsed.success) return parsed.data as StageOutputs[K];
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "(root)";
  throw new DomainError(
    "PRECONDITION_FAILED",
    `the ${key} stage's recorded output does not fit its schema at ${where}: ${issue?.message ?? "invalid"}`,
  );
}
