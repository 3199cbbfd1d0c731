import { z } from "zod";
import { AuditJobPayload, AuditResult, GradeBatchJobPayload, GradeJobPayload, GradeResult } from "../grading/schemas";
import {
  AdapterSnapshot,
  GenerateSpec,
  GenerateSummary,
  RunRecord,
  TokenizeSummary,
  TrainSpec,
} from "../trainer/schemas";
import { InspectModelJobPayload, InspectModelJobResult, TinyModelJobPayload, TinyModelJobResult } from "./model-jobs";
import { DpoJobPayload, DpoJobResult } from "./dpo";
import { GrpoJobPayload, GrpoJobResult } from "./grpo";
import { ScoreJobPayload, ScoreJobResult } from "./score";
import { EpisodeJobPayload, EpisodeJobResult } from "../episodes/job";
import { JobRequirements, type JobType, ShellJobPayload } from "./schemas";
import { DpoStepProgress, GrpoStepProgress, ItemsProgress, NoProgress, TrainStepProgress } from "./progress";

// One payload, one result and one progress schema per job type: what the control plane enqueues,
// what the agent's handler receives (parsed with the payload schema) and returns (parsed with the
// result schema before it is sent, and again where the server receives it: jobs/receipt.ts), the
// progress events it reports (jobs/progress.ts), and what the control plane reads back from
// `jobs.result` (parseJobResult, the one reader). Payloads are strict objects:
// a misspelled key is refused at enqueue instead of being dropped somewhere on the way to Python.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

// ------------------------------------------------------------------ shell

export const ShellJobResult = z.strictObject({ outputTruncated: z.boolean() });
export type ShellJobResult = z.infer<typeof ShellJobResult>;

// ------------------------------------------------------------------ grade, audit (payloads: grading/schemas.ts)

/** The GradeResult itself (what the teacher and experiment runners parse) plus the reference's test ids. */
export const GradeJobResult = GradeResult.extend({ expectedTestIds: z.array(z.string()) }).strict();
export type GradeJobResult = z.infer<typeof GradeJobResult>;

/**
 * One entry per item of a `grade-batch` payload, in its order. `graded`: a verdict (never
 * infra_error). `error`: no verdict for this item (the grader's infra_error, the task's reference
 * failing, an abort before or while it was graded); the sender retries such an item alone.
 */
export const GradeBatchItemResult = z.discriminatedUnion("status", [
  z.strictObject({
    key: z.string(),
    status: z.literal("graded"),
    grade: GradeJobResult.refine((g) => g.verdict !== "infra_error", "an infra_error is not a verdict"),
  }),
  z.strictObject({
    key: z.string(),
    status: z.literal("error"),
    reason: z.enum(["infra_error", "user_error"]),
    error: z.string(),
    /** The grader's own result when it produced one (its infra_error evidence). */
    grade: GradeResult.nullable(),
  }),
]);
export type GradeBatchItemResult = z.infer<typeof GradeBatchItemResult>;
/** Also what an interrupted batch reports with its failure: the items graded before the interruption. */
export const GradeBatchJobResult = z.strictObject({ items: z.array(GradeBatchItemResult) });
export type GradeBatchJobResult = z.infer<typeof GradeBatchJobResult>;

export const AuditJobResult = z.strictObject({ audit: AuditResult });
export type AuditJobResult = z.infer<typeof AuditJobResult>;

// ------------------------------------------------------------------ train

/** The TrainSpec less the paths, which the agent chooses (its blob cache and scratch folder). */
export const TrainJobSpec = TrainSpec.omit({ dataset: true, eval_dataset: true, output_dir: true }).strict();
export type TrainJobSpec = z.input<typeof TrainJobSpec>;

export const TrainJobPayload = z.strictObject({
  /** The SFT snapshot's blob in the artifact store: required, the agent fetches the dataset by it. */
  datasetHash: Sha256,
  evalDatasetHash: Sha256.nullable().optional(),
  spec: TrainJobSpec,
});

/** `artifact`: the archive of the snapshot in the artifact store, which any agent can fetch. */
export const TrainedSnapshot = AdapterSnapshot.extend({ artifact: Sha256.nullable() });
export type TrainedSnapshot = z.infer<typeof TrainedSnapshot>;
/** The trainer's run record, each snapshot with the archive the agent uploaded. */
export const TrainJobResult = RunRecord.extend({ snapshots: z.array(TrainedSnapshot) }).strict();
export type TrainJobResult = z.infer<typeof TrainJobResult>;

// ------------------------------------------------------------------ generate

export const GenerateJobSpec = GenerateSpec.omit({ adapter: true }).strict();
export type GenerateJobSpec = z.input<typeof GenerateJobSpec>;

export const GenerateJobPayload = z
  .strictObject({
    spec: GenerateJobSpec,
    /** The adapter's archive in the artifact store (null: the base model). */
    adapterArtifact: Sha256.nullable().optional(),
    /** The snapshot folder's sha256_tree; the trainer checks it as spec.expected_adapter_sha256. */
    adapterSha256: Sha256.nullable().optional(),
    promptTemplateHash: Sha256.optional(),
  })
  .refine((p) => !p.adapterSha256 || p.adapterArtifact, {
    message: "an adapter was named without its archive (adapterArtifact)",
    path: ["adapterArtifact"],
  });

export const GenerateOutput = z.strictObject({
  task_id: z.string(),
  /** Which of the task's samples (spec.samples) this is, and its seed (null: greedy); defaults read older results. */
  sample_index: z.number().int().min(0).default(0),
  seed: z.number().int().min(0).nullable().default(null),
  text: z.string(),
  finish_reason: z.enum(["stop", "length"]),
  completion_tokens: z.number().int(),
});
export type GenerateOutput = z.infer<typeof GenerateOutput>;
/** One text per prompt and the trainer's summary (from which the evaluation protocol is taken). */
export const GenerateJobResult = z.strictObject({ outputs: z.array(GenerateOutput), summary: GenerateSummary });
export type GenerateJobResult = z.infer<typeof GenerateJobResult>;

// ------------------------------------------------------------------ tokenize

export const TokenizeJobPayload = z.strictObject({
  /** The control plane's key for copying the counts back to the dataset row; the agent does not read it. */
  datasetId: z.string().uuid(),
  datasetSha256: Sha256,
  model: z.string().min(1),
  maxLength: z.number().int().min(8).optional(),
});
export const TokenizeJobResult = z.strictObject({ tokenize: TokenizeSummary });
export type TokenizeJobResult = z.infer<typeof TokenizeJobResult>;

// ------------------------------------------------------------------ the map

export const JOB_CONTRACTS = {
  shell: { payload: ShellJobPayload, result: ShellJobResult, progress: NoProgress },
  grade: { payload: GradeJobPayload, result: GradeJobResult, progress: NoProgress },
  "grade-batch": { payload: GradeBatchJobPayload, result: GradeBatchJobResult, progress: ItemsProgress },
  audit: { payload: AuditJobPayload, result: AuditJobResult, progress: NoProgress },
  train: { payload: TrainJobPayload, result: TrainJobResult, progress: TrainStepProgress },
  dpo: { payload: DpoJobPayload, result: DpoJobResult, progress: DpoStepProgress },
  grpo: { payload: GrpoJobPayload, result: GrpoJobResult, progress: GrpoStepProgress },
  score: { payload: ScoreJobPayload, result: ScoreJobResult, progress: NoProgress },
  generate: { payload: GenerateJobPayload, result: GenerateJobResult, progress: ItemsProgress },
  tokenize: { payload: TokenizeJobPayload, result: TokenizeJobResult, progress: NoProgress },
  "inspect-model": { payload: InspectModelJobPayload, result: InspectModelJobResult, progress: NoProgress },
  // tiny-model: the warm-up's optimizer steps (the CPU demo base), as a train job's.
  "tiny-model": { payload: TinyModelJobPayload, result: TinyModelJobResult, progress: TrainStepProgress },
  episode: { payload: EpisodeJobPayload, result: EpisodeJobResult, progress: NoProgress },
} as const satisfies Record<JobType, { payload: z.ZodType; result: z.ZodType; progress: z.ZodType }>;

type Contracts = typeof JOB_CONTRACTS;
/** What a caller writes (defaults may be left out). */
export type JobPayloadInput<T extends JobType> = z.input<Contracts[T]["payload"]>;
/** What a handler gets (defaults filled). */
export type JobPayload<T extends JobType> = z.output<Contracts[T]["payload"]>;
export type JobResult<T extends JobType> = z.output<Contracts[T]["result"]>;
export type JobProgressOf<T extends JobType> = z.output<Contracts[T]["progress"]>;

// The map seen per type, so that indexing it with a generic T keeps the types tied to T.
type ContractOf = {
  [T in JobType]: {
    payload: z.ZodType<JobPayload<T>, JobPayloadInput<T>>;
    result: z.ZodType<JobResult<T>>;
    progress: z.ZodType<JobProgressOf<T>>;
  };
};
const contracts: ContractOf = JOB_CONTRACTS;

export type JobPayloadParse<T extends JobType> = { ok: true; payload: JobPayload<T> } | { ok: false; error: string };

export function parseJobPayload<T extends JobType>(type: T, payload: unknown): JobPayloadParse<T> {
  const r = contracts[type].payload.safeParse(payload);
  return r.success
    ? { ok: true, payload: r.data }
    : { ok: false, error: `invalid ${type} payload: ${z.prettifyError(r.error)}` };
}

/** A stored or reported result read with its type's schema; null when it does not match (an older agent, a failed job). */
export function parseJobResult<T extends JobType>(type: T, result: unknown): JobResult<T> | null {
  const r = contracts[type].result.safeParse(result);
  return r.success ? r.data : null;
}

/** Like parseJobResult, with zod's message when it does not match. */
export function checkJobResult<T extends JobType>(
  type: T,
  result: unknown,
): { ok: true; result: JobResult<T> } | { ok: false; error: string } {
  const r = contracts[type].result.safeParse(result);
  return r.success
    ? { ok: true, result: r.data }
    : { ok: false, error: `${type} result does not match its contract: ${z.prettifyError(r.error)}` };
}

/** A progress event checked against its type's variant, with zod's message (naming the field) when it does not match. */
export function checkJobProgress<T extends JobType>(
  type: T,
  data: unknown,
): { ok: true; progress: JobProgressOf<T> } | { ok: false; error: string } {
  const r = contracts[type].progress.safeParse(data);
  return r.success
    ? { ok: true, progress: r.data }
    : { ok: false, error: `${type} progress does not match its contract: ${z.prettifyError(r.error)}` };
}

// ------------------------------------------------------------------ enqueue

// What any caller may ask of a job; the experiment and the dedupe key are added by the server only.
const requestFields = {
  requirements: JobRequirements.default({ labels: [], gpus: 0, gpuMemoryMb: 0 }),
  priority: z.number().int().min(-1000).max(1000).default(0),
  maxAttempts: z.number().int().min(1).max(20).default(3),
  maxDurationS: z
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3600)
    .default(3600),
};
const enqueueFields = {
  ...requestFields,
  experimentId: z.string().uuid().optional(),
  dedupeKey: z.string().max(300).optional(),
  /**
   * Experiments whose job the dedupe key may already hold for the same work: a study's arms share
   * the training they have in common (one job, one adapter) instead of each repeating it.
   */
  sharedWith: z.array(z.string().uuid()).max(100).optional(),
  // The user on whose behalf the job runs (null: the server's own, e.g. an experiment's stage).
  createdBy: z.string().uuid().optional(),
};
const enqueueOf = <T extends JobType>(type: T) =>
  z.object({ type: z.literal(type), payload: JOB_CONTRACTS[type].payload, ...enqueueFields });
// Strict: a request naming an experiment or a dedupe key is refused with the field named, not
// silently trimmed (a key is how the runner finds its stage's job, so naming one plants a job there).
const createOf = <T extends JobType>(type: T) =>
  z.strictObject({ type: z.literal(type), payload: JOB_CONTRACTS[type].payload, ...requestFields });

/** A job to enqueue: its payload is checked against its type's contract at compile time and parsed at run time. */
export const EnqueueJob = z.discriminatedUnion("type", [
  enqueueOf("shell"),
  enqueueOf("grade"),
  enqueueOf("grade-batch"),
  enqueueOf("audit"),
  enqueueOf("train"),
  enqueueOf("dpo"),
  enqueueOf("grpo"),
  enqueueOf("score"),
  enqueueOf("generate"),
  enqueueOf("tokenize"),
  enqueueOf("inspect-model"),
  enqueueOf("tiny-model"),
  enqueueOf("episode"),
]);
export type EnqueueJob = z.input<typeof EnqueueJob>;
export type EnqueueJobParsed = z.output<typeof EnqueueJob>;

/** A job as the generic job API (`jobs.create`) takes it: no experiment, dedupe key or creator. */
export const CreateJob = z.discriminatedUnion("type", [
  createOf("shell"),
  createOf("grade"),
  createOf("grade-batch"),
  createOf("audit"),
  createOf("train"),
  createOf("dpo"),
  createOf("grpo"),
  createOf("score"),
  createOf("generate"),
  createOf("tokenize"),
  createOf("inspect-model"),
  createOf("tiny-model"),
  createOf("episode"),
]);
export type CreateJob = z.input<typeof CreateJob>;
