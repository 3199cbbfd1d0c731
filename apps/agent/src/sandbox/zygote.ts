import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";
import { bwrapArgv, confinedArgv, GRADER_MOUNT, SANDBOX_ENV } from "./bwrap";
import { createCgroup, type Cgroup } from "./cgroup";
import type { SandboxConfig, SandboxLimits } from "./types";

// A long-lived grading sandbox: one bwrap instance whose python has pytest imported, answering
// one request at a time (runner.py). Every candidate still gets fresh mount/PID/IPC namespaces, a
// fresh tmpfs and no capabilities; the sandbox itself is replaced whenever anything about it
// looks wrong (a missed deadline, an unparsable answer, a process that outlived its request).

export type RunnerRequest = {
  candidate: { path: string; content: string }[];
  files: { path: string; content: string }[];
  tests: { path: string; content: string; layer: "public" | "hidden" | "canary" }[];
  limits: SandboxLimits;
};

export type RunnerTest = { id: string; layer: string; outcome: string; message: string };
export type RunnerResponse = {
  syntax_errors: string[];
  limit: "timeout" | "resource_limit" | null;
  limit_detail: string;
  infra_error: string | null;
  runner_lost: boolean;
  exit_code: number | null;
  signal: string | null;
  junit: RunnerTest[] | null;
  plugin: RunnerTest[] | null;
  stdout: string;
  stderr: string;
  output_truncated: boolean;
  wall_ms: number;
  cpu_ms: number | null;
  maxrss_kb: number | null;
  cgroup_peak_kb: number | null;
};

const lost = (why: string): RunnerResponse => ({
  syntax_errors: [], limit: null, limit_detail: "", infra_error: null, runner_lost: true, exit_code: null, signal: null,
  junit: null, plugin: null, stdout: "", stderr: why, output_truncated: false, wall_ms: 0, cpu_ms: null, maxrss_kb: null, cgroup_peak_kb: null,
});

export class Zygote {
  private child: ChildProcess | null = null;
  private cg: Cgroup | null = null;
  private lines: AsyncIterator<string> | null = null;
  private stderr = "";
  private scratch: string;
  private baselineProcs = 0;

  constructor(private readonly cfg: SandboxConfig, private readonly limits: SandboxLimits) {
    this.scratch = join(cfg.scratchDir, `zygote-${process.pid}-${randomBytes(4).toString("hex")}`);
  }

  get sandboxed(): boolean {
    return this.cfg.backend === "bwrap";
  }

  async start(): Promise<void> {
    const py = `${GRADER_MOUNT}/.venv/bin/python`;
    let cmd: string[];
    let env: Record<string, string>;
    if (this.sandboxed) {
      // The zygote's python needs the pids/memory room of one candidate plus its own.
      this.cg = createCgroup({ pids: this.limits.pids + 8, memoryMb: this.limits.memoryMb + 128, cpus: 1 });
      const argv = [py, "-s", "-P", `${GRADER_MOUNT}/runner.py`, "--mode", "sandbox", "--ini", `${GRADER_MOUNT}/pytest.ini`];
      const inner = bwrapArgv({ cfg: this.cfg, limits: this.limits, extra: ["--dir", "/box"], chdir: "/tmp", capAdd: ["CAP_SYS_ADMIN"] }, argv);
      ({ argv: cmd, env } = confinedArgv(this.cfg, this.limits, this.cg?.dirs ?? [], inner, { cpuLimit: false, dropUid: true }));
    } else {
      mkdirSync(this.scratch, { recursive: true });
      const dir = this.cfg.graderDir;
      const argv = [join(dir, ".venv/bin/python"), "-s", "-P", join(dir, "runner.py"), "--mode", "process", "--ini", join(dir, "pytest.ini"), "--scratch", this.scratch];
      ({ argv: cmd } = confinedArgv(this.cfg, this.limits, [], argv, { cpuLimit: false, dropUid: false }));
      env = { ...SANDBOX_ENV, AGENTLAB_CGROUPS: "" };
    }
    const [file, ...args] = cmd;
    const child = spawn(file ?? "/bin/sh", args, { env: env as NodeJS.ProcessEnv, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    child.stderr.on("data", (b: Buffer) => {
      this.stderr = (this.stderr + b.toString("utf8")).slice(-8192);
    });
    child.stdin.on("error", () => undefined); // a dead zygote shows up as a lost answer instead
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const ready = await this.nextLine(30_000);
    if (!ready || !String(JSON.parse(ready).ready)) {
      const why = this.stderr;
      this.stop();
      throw new Error(`grading sandbox failed to start: ${why.trim() || "no answer"}`);
    }
    this.baselineProcs = this.cg?.procs().length ?? 0;
  }

  private async nextLine(timeoutMs: number): Promise<string | null> {
    const lines = this.lines;
    if (!lines) return null;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    try {
      const r = await Promise.race([lines.next(), timeout]);
      return r && !r.done ? r.value : null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Grades one request. Never throws for candidate behaviour; a broken sandbox is restarted. */
  async request(req: RunnerRequest): Promise<RunnerResponse> {
    if (!this.child) await this.start();
    const child = this.child;
    if (!child) return lost("sandbox not running");
    this.cg?.resetPeak();
    const before = this.cg?.counters();
    const id = randomBytes(6).toString("hex");
    child.stdin?.write(JSON.stringify({ id, ...req, addressSpaceLimit: !this.cg }) + "\n");
    const line = await this.nextLine((req.limits.wallTimeoutS + 15) * 1000);
    let res: RunnerResponse;
    try {
      res = line ? (JSON.parse(line) as RunnerResponse) : lost(`no answer from the runner: ${this.stderr.slice(-500)}`);
    } catch {
      res = lost("unparsable answer from the runner");
    }
    res.runner_lost = Boolean(res.runner_lost) || !line;
    res.stderr = res.stderr ?? "";
    const after = this.cg?.counters();
    res.cgroup_peak_kb = after?.peakMemoryKb ?? null;
    if (before && after && !res.limit && (after.oomKills > before.oomKills || after.pidsMaxHits > before.pidsMaxHits)) {
      res.limit = "resource_limit";
      res.limit_detail = after.oomKills > before.oomKills ? "memory limit (OOM kill)" : "process limit (pids.max)";
    }
    // Anything unusual: never reuse this sandbox for another candidate.
    const extra = (this.cg?.procs().length ?? 0) > this.baselineProcs;
    if (res.runner_lost || extra || (line && (JSON.parse(line) as { id?: string }).id !== id)) this.stop();
    return res;
  }

  stop(): void {
    const child = this.child;
    this.child = null;
    this.lines = null;
    if (child?.pid) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    this.cg?.destroy();
    this.cg = null;
    if (!this.sandboxed) rmSync(this.scratch, { recursive: true, force: true });
  }
}
