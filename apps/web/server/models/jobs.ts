import {
  CPU_DEMO_POSITIONS,
  CPU_DEMO_SHAPE,
  CPU_DEMO_WARMUP_DESCRIPTION,
  checkJobProgress,
  cpuDemoWarmupSamples,
  DomainError,
  promptTemplateText,
  sftLine,
  type TinyModelJobPayload,
  parseJobResult,
  type InspectModelSummary,
  type JobState,
  type TinyModelSummary,
} from "@agentlab/core";
import { getJob, listAgents } from "@agentlab/db";
import { publishBlob } from "../artifacts/publish";
import { splitTasks } from "../experiments/tasks";
import type { Services } from "../services";

// The base-model picker: an agent inspects a model (offline, its folder or hub
// cache) before an experiment starts, and builds the tiny demo model from a split's train tasks.

/** Inspection reads a folder and a config: minutes would mean something is wrong (a hung filesystem). */
const INSPECT_MAX_S = 300;
/** The tiny model's tokenizer fit and random init take seconds to a minute on a CPU. */
const TINY_MAX_S = 1800;
/** The CPU demo base's warm-up: about 2 minutes on 2 quiet cores, 20 measured at load 17–20. */
const WARMED_TINY_MAX_S = 3600;

/** `plain`: random weights (the picker's quick model); `cpu-demo`: the CPU demo preset's warmed base. */
export type TinyModelKind = "plain" | "cpu-demo";

export async function enqueueInspect(services: Services, model: string, revision: string | null) {
  const job = await services.queue.enqueue({
    type: "inspect-model",
    payload: { model, revision },
    // A hub cache can be filled between two checks: every check is a fresh job.
    maxAttempts: 1,
    maxDurationS: INSPECT_MAX_S,
  });
  return { jobId: job.id };
}

/**
 * The corpus is the split's train tasks only (a tokenizer fitted on dev/test text would leak
 * them), published as a pool file the agent fetches by its hash. The CPU demo's base (core
 * cpu-demo.ts) adds the prompt template's words to the corpus and its warm-up data, built here from
 * the same train tasks, so the agent runs a recipe it does not need to know.
 */
export async function enqueueTinyModel(services: Services, splitId: string, kind: TinyModelKind = "plain") {
  const train = await splitTasks(services.db, splitId, "train");
  if (train.length === 0)
    throw new DomainError("PRECONDITION_FAILED", "the split has no train tasks to fit a tokenizer on");
  const publish = (text: string) => publishBlob(services, Buffer.from(text, "utf8"));
  const corpusSha256 = await publish(train.map((t) => `${JSON.stringify(t)}\n`).join(""));
  const trainTaskIds = train.map((t) => t.id);
  const payload: TinyModelJobPayload =
    kind === "plain"
      ? // Positions for a full training length plus the answer (the form's defaults: 2048 + 512).
        { corpusSha256, trainTaskIds, shape: { max_position_embeddings: 4096 } }
      : {
          corpusSha256,
          trainTaskIds,
          textSha256s: [await publish(promptTemplateText(train))],
          shape: {
            vocab_size: CPU_DEMO_SHAPE.vocab,
            hidden_size: CPU_DEMO_SHAPE.hidden,
            intermediate_size: CPU_DEMO_SHAPE.intermediate,
            num_layers: CPU_DEMO_SHAPE.layers,
            max_position_embeddings: CPU_DEMO_POSITIONS,
          },
          warmup: {
            datasetSha256: await publish(`${cpuDemoWarmupSamples(train).map(sftLine).join("\n")}\n`),
            description: CPU_DEMO_WARMUP_DESCRIPTION,
            steps: CPU_DEMO_SHAPE.warmupSteps,
            learningRate: CPU_DEMO_SHAPE.warmupLr,
            batchSize: CPU_DEMO_SHAPE.warmupBatch,
          },
        };
  const job = await services.queue.enqueue({
    type: "tiny-model",
    payload,
    maxAttempts: 2,
    maxDurationS: kind === "plain" ? TINY_MAX_S : WARMED_TINY_MAX_S,
  });
  return { jobId: job.id };
}

export type ModelJobView = {
  jobId: string;
  type: "inspect-model" | "tiny-model";
  state: JobState;
  error: string | null;
  /** The agent that ran it: a local path is a path on that agent's machine. */
  agentName: string | null;
  facts: InspectModelSummary | null;
  tinyModel: TinyModelSummary | null;
  /** A warmed tiny build's latest warm-up step (null before the first, and for other builds). */
  warmup: { step: number; totalSteps: number; etaS: number } | null;
};

/** One picker job with its result read by its contract. */
export async function modelJob(services: Services, jobId: string): Promise<ModelJobView> {
  const job = await getJob(services.db, jobId);
  if (!job || (job.type !== "inspect-model" && job.type !== "tiny-model"))
    throw new DomainError("NOT_FOUND", "no such model job");
  const agent = job.agentId ? (await listAgents(services.db)).find((a) => a.id === job.agentId) : undefined;
  const inspected = job.type === "inspect-model" ? parseJobResult("inspect-model", job.result) : null;
  const built = job.type === "tiny-model" ? parseJobResult("tiny-model", job.result) : null;
  const step = job.type === "tiny-model" && job.progress ? checkJobProgress("tiny-model", job.progress) : null;
  return {
    jobId: job.id,
    type: job.type,
    state: job.state,
    error: job.error,
    agentName: agent?.name ?? null,
    facts: inspected?.model ?? null,
    tinyModel: built?.tinyModel ?? null,
    warmup: step?.ok
      ? { step: step.progress.step, totalSteps: step.progress.total_steps, etaS: step.progress.eta_s }
      : null,
  };
}
