import type { Logger } from "pino";
import type { z } from "zod";
import type { GpuPool } from "../gpu-pool";
import type { EarlierArtifact, JobPayload, JobProgress, JobResult, JobType, TerminalReason } from "@agentlab/core";

// What a job handler gets from the agent's supervisor. Handlers never talk to the server directly:
// logs, progress and artifacts go through the supervisor, which fences them by attempt.
export type JobContext = {
  jobId: string;
  attemptId: string;
  attempt: number;
  type: string;
  payload: Record<string, unknown>;
  /** What earlier attempts of this job uploaded that it can resume from (empty on a first attempt). */
  earlierArtifacts: EarlierArtifact[];
  /** Aborted on cancel, lost lease (self-fencing), max_duration or agent shutdown; see `abortReason`. */
  signal: AbortSignal;
  abortReason(): AbortReason | null;
  log: Logger;
  /** Ordered, chunked, spooled while disconnected. */
  emitLog(stream: "stdout" | "stderr" | "system", data: string): void;
  /** One event of the job type's progress contract (JOB_CONTRACTS[type].progress), checked where the server receives it. */
  progress(data: JobProgress): void;
  /** Uploads a file to the content-addressed store (resumable) and links it to this attempt. */
  uploadArtifact(path: string, meta: { name: string; kind: string; meta?: Record<string, unknown> }): Promise<string>;
  /**
   * A request to the server on behalf of this attempt (jobId and attemptId added, so the server
   * fences it), answered in its ack and parsed with `reply`; throws RequestRefused when the server
   * refuses it or the attempt stops. Used by an episode's teacher policy for its turns. Absent
   * where no server is (a handler driven directly by a test).
   */
  ask?<S extends z.ZodType>(
    event: string,
    data: Record<string, unknown>,
    reply: S,
    timeoutMs?: number,
  ): Promise<z.output<S>>;
  /** A private scratch directory for this attempt, removed afterwards. */
  workDir: string;
  agent: AgentRuntimeInfo;
};

// `failed`: the agent hit a failure it cannot pin on one job (an unhandled rejection) and stops them.
export type AbortReason = "canceled" | "lease_lost" | "timeout" | "shutdown" | "failed";

export type AgentRuntimeInfo = {
  serverUrl: string;
  credential: string;
  stateDir: string;
  python: string | null;
  sandboxBackend: "bwrap" | "process";
  sandboxOk: boolean;
  /** This box's GPUs, leased to the running jobs; absent: nothing is pinned. */
  gpus?: GpuPool;
};

export type JobOutcome = {
  reason: TerminalReason;
  exitCode?: number | null;
  signal?: string | null;
  result?: Record<string, unknown>;
  error?: string | null;
};

export type JobHandler = (ctx: JobContext) => Promise<JobOutcome>;

/** What a handler of job type T returns: a success carries T's result (checked against its contract before it is sent). */
export type TypedOutcome<T extends JobType> =
  | { reason: "succeeded"; result: JobResult<T>; exitCode?: number | null; signal?: string | null; error?: null }
  | {
      reason: Exclude<TerminalReason, "succeeded">;
      result?: Record<string, unknown>;
      exitCode?: number | null;
      signal?: string | null;
      error?: string | null;
    };

/** A handler of job type T: it gets the payload parsed by T's contract (JOB_CONTRACTS in core). */
export type TypedHandler<T extends JobType> = (ctx: JobContext, payload: JobPayload<T>) => Promise<TypedOutcome<T>>;
