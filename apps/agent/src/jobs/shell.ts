import { ShellJobPayload } from "@agentlab/core";
import { runProcessTree } from "../runner/process-tree";
import type { JobHandler } from "./types";

// Runs an argv with env and limits; the building block later job types reuse.
export const shellJob =
  (graceMs: number): JobHandler =>
  async (ctx) => {
    const parsed = ShellJobPayload.safeParse(ctx.payload);
    if (!parsed.success) return { reason: "user_error", error: `invalid shell payload: ${parsed.error.message}` };
    const p = parsed.data;
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
    if (res.spawnError) return { ...base, reason: "user_error", error: `could not start ${p.argv[0]}: ${res.spawnError}` };
    const aborted = ctx.abortReason();
    if (aborted === "canceled") return { ...base, reason: "canceled" };
    if (aborted === "timeout" || timer.signal.aborted) return { ...base, reason: "timeout", error: "wall time limit reached" };
    if (aborted) return { ...base, reason: "infra_error", error: `interrupted: ${aborted}` };
    return res.exitCode === 0 ? { ...base, reason: "succeeded" } : { ...base, reason: "user_error", error: `exited with ${res.exitCode ?? res.signal}` };
  };
