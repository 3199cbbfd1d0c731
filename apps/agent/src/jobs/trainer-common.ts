import { execFile } from "node:child_process";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { fetchArtifact } from "../artifacts";
import { TrainerRunError } from "../trainer/python";
import type { JobContext, JobOutcome } from "./types";

const exec = promisify(execFile);

/** Blobs from the server (datasets, adapters) are cached by hash under the agent's state dir. */
export const fetchBlob = (ctx: JobContext, sha256: string) => fetchArtifact(ctx.agent.serverUrl, ctx.agent.credential, sha256, join(ctx.agent.stateDir, "cache", "blobs"));

/** Adapter snapshots travel as deterministic tar archives (sorted names, zero mtimes and owners). */
export async function tarDirectory(dir: string, out: string): Promise<string> {
  await exec("tar", ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-cf", out, "-C", dir, "."]);
  return out;
}

/** An adapter archive unpacked once per hash, reused by every later generate job on this box. */
export async function adapterDir(ctx: JobContext, artifactSha: string): Promise<string> {
  const dir = join(ctx.agent.stateDir, "cache", "adapters", artifactSha);
  const done = join(dir, ".complete");
  if (await stat(done).then(() => true, () => false)) return dir;
  const archive = await fetchBlob(ctx, artifactSha);
  await mkdir(dir, { recursive: true });
  await exec("tar", ["-xf", archive, "-C", dir]);
  await writeFile(done, "");
  return dir;
}

/** Maps a trainer failure to the job's terminal reason, honouring why the agent stopped it. */
export function trainerFailure(ctx: JobContext, err: unknown): JobOutcome {
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

export const requirePython = (ctx: JobContext): string | JobOutcome =>
  ctx.agent.python ?? { reason: "infra_error", error: "this agent has no Python trainer environment (run scripts/setup-python.sh or set AGENTLAB_PYTHON)" };
