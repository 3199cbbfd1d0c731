import {
  DomainError,
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
 * them), published as a pool file the agent fetches by its hash.
 */
export async function enqueueTinyModel(services: Services, splitId: string) {
  const train = await splitTasks(services.db, splitId, "train");
  if (train.length === 0)
    throw new DomainError("PRECONDITION_FAILED", "the split has no train tasks to fit a tokenizer on");
  const corpus = Buffer.from(train.map((t) => `${JSON.stringify(t)}\n`).join(""), "utf8");
  const corpusSha256 = await publishBlob(services, corpus);
  const job = await services.queue.enqueue({
    type: "tiny-model",
    // Positions for a full training length plus the answer (the form's defaults: 2048 + 512).
    payload: { corpusSha256, trainTaskIds: train.map((t) => t.id), shape: { max_position_embeddings: 4096 } },
    maxAttempts: 2,
    maxDurationS: TINY_MAX_S,
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
};

/** One picker job with its result read by its contract. */
export async function modelJob(services: Services, jobId: string): Promise<ModelJobView> {
  const job = await getJob(services.db, jobId);
  if (!job || (job.type !== "inspect-model" && job.type !== "tiny-model"))
    throw new DomainError("NOT_FOUND", "no such model job");
  const agent = job.agentId ? (await listAgents(services.db)).find((a) => a.id === job.agentId) : undefined;
  const inspected = job.type === "inspect-model" ? parseJobResult("inspect-model", job.result) : null;
  const built = job.type === "tiny-model" ? parseJobResult("tiny-model", job.result) : null;
  return {
    jobId: job.id,
    type: job.type,
    state: job.state,
    error: job.error,
    agentName: agent?.name ?? null,
    facts: inspected?.model ?? null,
    tinyModel: built?.tinyModel ?? null,
  };
}
