import type { SnapshotQuality } from "../teacher/quality";
import type { TrainMethod } from "../trainer/schemas";
import type { BaseModel, TrainingConfig } from "./config";
import type { RecordedProtocol } from "./protocol";
import type { AnswerRepeats } from "./answer-contamination";

// The report header: everything that was compared and how, as recorded when the report
// was built. The page links the ids; the share page and the exports print the same facts without
// links. Every field comes from a stored row (experiment, split, dataset, train jobs, agents).

export type HeaderAdapter = {
  seed: number;
  epoch: number;
  sha256: string;
  method: TrainMethod | null;
  trainJobId: string | null;
  selected: boolean;
  onTest: boolean;
};
export type HeaderAgent = {
  id: string;
  name: string;
  os: string | null;
  cpuCores: number | null;
  ramMb: number | null;
  gpus: string[];
  torch: string | null;
  cuda: string | null;
  jobTypes: string[];
  attempts: number;
};

export type ReportHeader = {
  experiment: { id: string; name: string; createdAt: string; reportAt: string; durationS: number };
  baseModel: BaseModel & { resolvedRevision: string | null; weightsSha256: string | null };
  adapters: HeaderAdapter[];
  dataset: {
    id: string;
    name: string;
    hash: string;
    samples: number;
    tasks: number;
    oracleSamples: number;
    /** What its answers had to be to get in (absent in reports built before it: verified). */
    quality?: SnapshotQuality;
    supervisedTokens: number | null;
    totalTokens: number | null;
  } | null;
  training: TrainingConfig & { seeds: number[] };
  split: {
    id: string;
    name: string;
    seed: number;
    manifestHash: string;
    poolSnapshotHash: string;
    counts: Record<"train" | "dev" | "test", { tasks: number; groups: number }>;
  } | null;
  jobs: { type: string; count: number; firstStart: string | null; lastFinish: string | null }[];
  trainJobs: { seed: number; jobId: string }[];
  hardware: HeaderAgent[];
  /** References shared by several of the split's tasks, by family (absent in reports built before it). */
  answerRepeats?: AnswerRepeats;
};

export type HeaderInput = Omit<ReportHeader, "experiment" | "baseModel" | "training" | "adapters"> & {
  experiment: { id: string; name: string; createdAt: string; reportAt: string };
  baseModel: BaseModel;
  training: TrainingConfig;
  seeds: number[];
  adapters: Omit<HeaderAdapter, "selected" | "onTest">[];
  /** Any recorded protocol: the model part is identical for every evaluation (checked). */
  protocol: RecordedProtocol | null;
  selectedKey: string;
  testKeys: string[];
};

const adapterKey = (a: { seed: number; epoch: number }) => `s${a.seed}e${a.epoch}`;

export function reportHeader(input: HeaderInput): ReportHeader {
  const start = Date.parse(input.experiment.createdAt);
  const end = Date.parse(input.experiment.reportAt);
  return {
    experiment: {
      ...input.experiment,
      durationS: Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, Math.round((end - start) / 1000)) : 0,
    },
    baseModel: {
      ...input.baseModel,
      resolvedRevision: input.protocol?.model.revision ?? null,
      weightsSha256: input.protocol?.model.weightsSha256 ?? null,
    },
    adapters: [...input.adapters]
      .sort((a, b) => a.seed - b.seed || a.epoch - b.epoch)
      .map((a) => ({
        ...a,
        selected: adapterKey(a) === input.selectedKey,
        onTest: input.testKeys.includes(adapterKey(a)),
      })),
    dataset: input.dataset,
    training: { ...input.training, seeds: input.seeds },
    split: input.split,
    jobs: input.jobs,
    trainJobs: input.trainJobs,
    hardware: input.hardware,
  };
}

/** "1 h 02 min", "3 min 05 s", "42 s". */
export function formatDuration(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h) return `${h} h ${String(m).padStart(2, "0")} min`;
  if (m) return `${m} min ${String(sec).padStart(2, "0")} s`;
  return `${sec} s`;
}

/** One line per agent: name, CPU cores, RAM, GPUs. */
export function hardwareText(a: HeaderAgent): string {
  const gpus = a.gpus.length ? a.gpus.join(", ") : "no GPU";
  const cpu = a.cpuCores === null ? "CPU unknown" : `${a.cpuCores} CPU cores`;
  const ram = a.ramMb === null ? "" : `, ${(a.ramMb / 1024).toFixed(0)} GiB RAM`;
  const sw = [a.torch ? `torch ${a.torch}` : null, a.cuda ? `CUDA ${a.cuda}` : null].filter(Boolean).join(", ");
  return `${a.name}: ${cpu}${ram}, ${gpus}${sw ? ` (${sw})` : ""} — ran ${a.jobTypes.join(", ")} (${a.attempts} attempts)`;
}

/** The training settings on one line. */
export function trainingText(t: ReportHeader["training"]): string {
  const l = t.lora;
  return (
    `${t.method ?? "method resolved by the trainer"}; LoRA r ${l.r}, α ${l.alpha}, dropout ${l.dropout}, targets ${l.targets.join(", ")}; ` +
    `${trainingLengthText(t)}, lr ${t.learningRate} (${t.schedule}), ${trainingBatchText(t)} × accum ${t.gradAccum}, max length ${t.maxLength}, quantization ${t.quantization}; seeds ${t.seeds.join(", ")}`
  );
}

/** The run's length: epochs, or optimizer steps with the snapshots they are cut into. */
export const trainingLengthText = (t: Pick<TrainingConfig, "epochs" | "steps">): string =>
  t.steps !== undefined ? `${t.steps} steps (${t.epochs} snapshots)` : `${t.epochs} epochs`;

/** The micro-batch: a sample count, or a token budget when batches are packed by tokens. */
export const trainingBatchText = (t: Pick<TrainingConfig, "batchSize" | "batchTokens">): string =>
  t.batchTokens !== undefined ? `batch ≤ ${t.batchTokens} tokens` : `batch ${t.batchSize}`;
