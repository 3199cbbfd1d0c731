import { runProcessTree } from "../runner/process-tree";
import { contracted } from "./contract";
import type { JobHandler } from "./types";

/**
 * Shell jobs run any command as the agent's user, outside the sandbox: both `--allow-shell-jobs`
 * and AGENTLAB_ALLOW_SHELL_JOBS=1 must say so, so neither a stray env var nor a copied command line
 * turns them on alone.
 */
export const shellJobsAllowed = (flag: boolean | undefined, envValue: string | undefined): boolean =>
  flag === true && envValue === "1";

/** SHELL_REFUSED explains the opt-in; a user_error, so the queue does not hand the job around again. */
export const SHELL_REFUSED =
  "shell jobs are disabled on this agent (start it with --allow-shell-jobs and AGENTLAB_ALLOW_SHELL_JOBS=1 to run them)";

// What an agent without the opt-in does with a shell job that reaches it anyway (the claim never
// routes one there): refuse it without running anything.
export const refuseShellJob: JobHandler = async (ctx) => {
  ctx.log.warn({ jobId: ctx.jobId }, "refused a shell job: this agent did not opt in");
  return { reason: "user_error", error: SHELL_REFUSED };
};

// Runs an argv with env and limits outside the sandbox: only on agents that opted in.
export const shellJob = (graceMs: number): JobHandler =>
  contracted("shell", async (ctx, p) => {
    const timer = new AbortController();
    const wall = setTimeout(() => timer.abort(), p.limits.wallTimeoutS * 1000);
    const signal = AbortSignal.any([ctx.signal, timer.signal]);
    const res = await runProcessTree({
      argv: p.argv,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: ctx.workDir, ...p.env },
      cwd: p.cwd ?? ctx.workDir,
      signal,
      graceMs,
      maxOutputBytes: p.limits.maxOutputBytes,
      onOutput: (stream, data) => ctx.emitLog(stream, data),
    }).finally(() => clearTimeout(wall));
    const base = { exitCode: res.exitCode, signal: res.signal, result: { outputTruncated: res.outputTruncated } };
    if (res.spawnError)
      return { ...base, reason: "user_error", error: `could not start ${p.argv[0]}: ${res.spawnError}` };
    const aborted = ctx.abortReason();
    if (aborted === "canceled") return { ...base, reason: "canceled" };
    if (aborted === "timeout" || timer.signal.aborted)
      return { ...base, reason: "timeout", error: "wall time limit reached" };
    if (aborted) return { ...base, reason: "infra_error", error: `interrupted: ${aborted}` };
    return res.exitCode === 0
      ? { ...base, reason: "succeeded" }
      : { ...base, reason: "user_error", error: `exited with ${res.exitCode ?? res.signal}` };
  });
