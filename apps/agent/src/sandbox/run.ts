import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { bwrapArgv, confinedArgv, SANDBOX_ENV } from "./bwrap";
import { createCgroup, type Cgroup } from "./cgroup";
import { collectOutput, signalOf } from "./output";
import type { SandboxConfig, SandboxLimits, SandboxResult } from "./types";

// One-shot sandboxed command: `run(workspace, argv, limits)`. The workspace directory's files are
// copied (by bwrap, through file descriptors) into a fresh size-limited tmpfs at /work; nothing is
// written back. The grader uses the faster zygote (zygote.ts); this path serves self-tests, the
// mutation generator and anything that is not a pytest run.

export const WORK = "/work";

export async function run(
  cfg: SandboxConfig,
  workspace: string,
  argv: string[],
  limits: SandboxLimits,
): Promise<SandboxResult> {
  const sandboxed = cfg.backend === "bwrap";
  const cg = sandboxed ? createCgroup({ pids: limits.pids, memoryMb: limits.memoryMb, cpus: 1 }) : null;
  const fds: number[] = [];
  try {
    let cmd: string[];
    let env: Record<string, string>;
    let cwd: string | undefined;
    if (sandboxed) {
      const extra = ["--size", String(limits.tmpfsMb << 20), "--tmpfs", WORK];
      for (const f of listFiles(workspace)) {
        const rel = relative(workspace, f.path);
        if (f.dir) extra.push("--dir", `${WORK}/${rel}`);
        else {
          fds.push(openSync(f.path, "r"));
          extra.push("--file", String(2 + fds.length), `${WORK}/${rel}`);
        }
      }
      const c = confinedArgv(cfg, limits, cg?.dirs ?? [], bwrapArgv({ cfg, limits, extra, chdir: WORK }, argv), {
        cpuLimit: true,
        dropUid: true,
      });
      cmd = c.argv;
      env = c.env;
    } else {
      // The explicit fallback: rlimits and a process group, nothing else; results say so.
      const c = confinedArgv(cfg, limits, [], argv, { cpuLimit: true, dropUid: false });
      cmd = c.argv;
      env = { ...SANDBOX_ENV, AGENTLAB_CGROUPS: "" };
      cwd = workspace;
    }
    return await execute(cmd, env, cwd, fds, limits, cg, sandboxed);
  } finally {
    for (const fd of fds) closeSync(fd);
    cg?.destroy();
  }
}

type Entry = { path: string; dir: boolean };
function listFiles(root: string): Entry[] {
  const out: Entry[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out.push({ path: p, dir: true });
        walk(p);
      } else if (e.isFile()) out.push({ path: p, dir: false });
    }
  };
  walk(root);
  return out;
}

async function execute(
  cmd: string[],
  env: Record<string, string>,
  cwd: string | undefined,
  fds: number[],
  limits: SandboxLimits,
  cg: Cgroup | null,
  sandboxed: boolean,
): Promise<SandboxResult> {
  const [file, ...args] = cmd;
  const t0 = performance.now();
  const child = spawn(file ?? "/bin/sh", args, {
    env: env as NodeJS.ProcessEnv,
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe", ...fds],
  });
  let timedOut = false;
  const killAll = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // group already gone
    }
    for (const pid of cg?.procs() ?? []) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // raced with exit
      }
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killAll();
  }, limits.wallTimeoutS * 1000);
  const [out, err, status] = await Promise.all([
    collectOutput(child.stdout, limits.maxOutputBytes),
    collectOutput(child.stderr, limits.maxOutputBytes),
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal })),
    ),
  ]);
  clearTimeout(timer);
  killAll(); // a detached helper of the command dies with the run
  const c = cg?.counters();
  const limitEvents: string[] = [];
  if (c && c.oomKills > 0) limitEvents.push("memory");
  if (c && c.pidsMaxHits > 0) limitEvents.push("pids");
  // bwrap reports a child killed by signal N as exit status 128+N.
  const fromBwrap = sandboxed && status.code !== null && status.code > 128 ? signalOf(status.code - 128) : null;
  return {
    backend: sandboxed ? "bwrap" : "process",
    unsandboxed: !sandboxed,
    exitCode: fromBwrap ? null : status.code,
    signal: status.signal ?? fromBwrap,
    timedOut,
    outputTruncated: out.truncated || err.truncated,
    stdout: out.text,
    stderr: err.text,
    peakMemoryKb: c?.peakMemoryKb ?? null,
    cpuTimeMs: c?.cpuMs ?? null,
    wallTimeMs: performance.now() - t0,
    limitEvents,
  };
}
