import { execFile } from "node:child_process";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { fetchArtifact } from "../artifacts";
import type { JobPayload, JobType } from "@agentlab/core";
import { TrainerRunError, type RunPythonOptions } from "../trainer/python";
import { gpuNeed, pinGpus } from "../gpu-pool";
import { contracted } from "./contract";
import type { JobContext, JobHandler, TypedOutcome } from "./types";

const exec = promisify(execFile);

/** Blobs from the server (datasets, adapters) are cached by hash under the agent's state dir. */
export const fetchBlob = (ctx: JobContext, sha256: string) =>
  fetchArtifact(ctx.agent.serverUrl, ctx.agent.credential, sha256, join(ctx.agent.stateDir, "cache", "blobs"));

/** Adapter snapshots travel as deterministic tar archives (sorted names, zero mtimes and owners). */
export async function tarDirectory(dir: string, out: string): Promise<string> {
  await exec("tar", [
    "--sort=name",
    "--mtime=@0",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "-cf",
    out,
    "-C",
    dir,
    ".",
  ]);
  return out;
}

/**
 * An adapter archive unpacked once per hash, reused by every later generate job on this box. The
 * completion marker lives beside the folder, never inside it: the folder must hash exactly like
 * the trained snapshot (the trainer verifies that before generating).
 */
export async function adapterDir(ctx: JobContext, artifactSha: string): Promise<string> {
  const dir = join(ctx.agent.stateDir, "cache", "adapters", artifactSha);
  const done = `${dir}.complete`;
  if (
    await stat(done).then(
      () => true,
      () => false,
    )
  )
    return dir;
  const archive = await fetchBlob(ctx, artifactSha);
  // A half-unpacked folder, or one an older agent left with its marker inside, is unpacked afresh.
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await exec("tar", ["-xf", archive, "-C", dir]);
  await writeFile(done, "");
  return dir;
}

/** Maps a trainer failure to the job's terminal reason, honouring why the agent stopped it. */
function trainerFailure<T extends JobType>(ctx: JobContext, err: unknown): TypedOutcome<T> {
  const aborted = ctx.abortReason();
  if (aborted === "canceled") return { reason: "canceled", error: "canceled" };
  if (aborted === "timeout") return { reason: "timeout", error: "max_duration reached" };
  if (aborted) return { reason: "infra_error", error: `interrupted: ${aborted}` };
  if (err instanceof TrainerRunError) {
    const reason = err.reason === "user_error" ? "user_error" : err.reason === "canceled" ? "canceled" : "infra_error";
    return { reason, exitCode: err.exitCode, signal: err.signal, error: err.message };
  }
  return { reason: "infra_error", error: err instanceof Error ? err.message : String(err) };
}

/** What a trainer-backed job's body gets: its parsed payload and the options every runPython call shares. */
export type TrainerRun<P> = { payload: P; python: RunPythonOptions };

/**
 * A job backed by the Python trainer: checks that the box has the trainer's Python, pins the GPUs
 * the job needs from the agent's pool (its trainer process sees only those; released when the body
 * returns or throws, so also after a crash or a cancel), runs the body with the payload its
 * contract parsed, and maps any failure to the job's terminal reason.
 */
export function trainerJob<T extends JobType>(
  type: T,
  graceMs: number,
  body: (ctx: JobContext, run: TrainerRun<JobPayload<T>>) => Promise<TypedOutcome<T>>,
): JobHandler {
  return contracted(type, async (ctx, payload) => {
    const python = ctx.agent.python;
    if (!python)
      return {
        reason: "infra_error",
        error: "this agent has no Python trainer environment (run scripts/setup-python.sh or set AGENTLAB_PYTHON)",
      };
    const pinned = pinGpus(ctx.agent.gpus, gpuNeed(type, payload));
    // The claim counted this agent's held GPUs; a shortfall here is a race with an unreserved job.
    if ("refusal" in pinned) return { reason: "infra_error", error: `${type} job ${pinned.refusal}` };
    if (pinned.lease) ctx.log.info({ gpus: pinned.lease.indices }, "GPUs pinned to the job");
    const options: RunPythonOptions = {
      python,
      signal: ctx.signal,
      graceMs,
      tmpDir: ctx.workDir,
      log: (stream, line) => ctx.emitLog(stream, `${line}\n`),
      env: pinned.env,
    };
    try {
      return await body(ctx, { payload, python: options });
    } catch (err) {
      return trainerFailure(ctx, err);
    } finally {
      pinned.lease?.release();
    }
  });
}

/** What an `artifact` event carries that the upload needs (train and dpo alike). */
type SnapshotEvent = {
  epoch: number;
  path: string;
  sha256: string;
  train_loss: number;
  eval_loss: number | null;
  step: number;
  files: string[];
};

/**
 * Uploads each epoch's adapter (and, for SFT, the trainer state a resumption needs) as soon as the
 * trainer reports it, one after another, so a canceled, failed or lost run still delivers the
 * epochs it finished. `artifacts`: epoch → adapter archive hash. A failed upload is caught where it
 * happens and kept: the chain itself never rejects, because it sits unawaited while the trainer
 * runs on, and a rejection nobody awaits ends the agent process.
 */
export function epochUploads(ctx: JobContext, extraMeta: (ev: SnapshotEvent) => Record<string, unknown> = () => ({})) {
  const artifacts = new Map<number, string>();
  let failure: Error | null = null;
  let chain = Promise.resolve();
  const upload = (epoch: number, what: string, body: () => Promise<void>) => {
    chain = chain.then(body).catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      ctx.log.error({ epoch, err: why }, `${what} upload failed`);
      failure ??= new Error(`the ${what} of epoch ${epoch} could not be uploaded: ${why}`);
    });
  };
  return {
    artifacts,
    add(ev: SnapshotEvent): void {
      upload(ev.epoch, "adapter", async () => {
        const tar = await tarDirectory(ev.path, join(ctx.workDir, `epoch-${ev.epoch}.tar`));
        const sha = await ctx.uploadArtifact(tar, {
          name: `adapter-epoch-${ev.epoch}`,
          kind: "adapter",
          meta: {
            epoch: ev.epoch,
            snapshotSha256: ev.sha256,
            trainLoss: ev.train_loss,
            evalLoss: ev.eval_loss,
            step: ev.step,
            files: ev.files,
            ...extraMeta(ev),
          },
        });
        artifacts.set(ev.epoch, sha);
      });
    },
    /** The optimizer/schedule/RNG state after an epoch (train.py `trainer_state` events). */
    addState(ev: { epoch: number; path: string; sha256: string }): void {
      upload(ev.epoch, "trainer state", async () => {
        const tar = await tarDirectory(ev.path, join(ctx.workDir, `state-epoch-${ev.epoch}.tar`));
        await ctx.uploadArtifact(tar, {
          name: `trainer-state-epoch-${ev.epoch}`,
          kind: "trainer_state",
          meta: { epoch: ev.epoch, stateSha256: ev.sha256 },
        });
      });
    },
    /** Waits for every upload; rejects with the first failure (which epoch, and why). */
    done: async () => {
      await chain;
      if (failure) throw failure;
    },
    /** Waits for every upload, ignoring failures (the run's own error wins). */
    settle: () => chain,
  };
}
