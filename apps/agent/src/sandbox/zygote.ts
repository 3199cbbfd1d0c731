import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";
import { bwrapArgv, confinedArgv, GRADER_MOUNT, SANDBOX_ENV } from "./bwrap";
import { createCgroup, type Cgroup } from "./cgroup";
import {
  RunnerCandidate as CoreRunnerCandidate,
  RunnerRequest as CoreRunnerRequest,
  RunnerSessionEnd,
  type RunnerCandidate,
} from "@agentlab/core";
import {
  emptyResponse,
  LINGER_CANDIDATES,
  lingerKey,
  lost,
  parseAnswer,
  readyLine,
  type RunnerRequest,
  type RunnerResponse,
} from "./runner-wire";
import type { SandboxConfig, SandboxLimits } from "./types";

// A long-lived grading sandbox: one bwrap instance (read-only root) whose python has pytest
// imported, answering one request at a time (runner.py). Per request, a judge process runs the
// tests and a separate candidate process holds the candidate's code (judge.py), each in fresh
// mount/PID/IPC/network namespaces with its own tmpfs and no capabilities. The sandbox itself is
// replaced whenever anything about it looks wrong: a missed deadline, an unparsable answer, a
// process that outlived its request, or a memory charge that did not return to its baseline.

/** Memory a warm sandbox may keep above its post-start charge before it is replaced. */
const MEMORY_SLACK_KB = 48 << 10;

export class Zygote {
  private child: ChildProcess | null = null;
  private cg: Cgroup | null = null;
  private lines: AsyncIterator<string> | null = null;
  private stderr = "";
  private scratch: string;
  private baselineProcs = 0;
  private baselineMemoryKb = 0;
  private startCount = 0;
  /** Bumped by every start and stop: a start that an abort overtook must not install itself. */
  private generation = 0;
  /** A session kept open after a single grade, for the same request's next candidate. */
  private lingering: { key: string; left: number; timer: NodeJS.Timeout } | null = null;
  /** Grades and a lingering session's end take turns (the idle timer fires between grades). */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cfg: SandboxConfig,
    private readonly limits: SandboxLimits,
    private readonly lingerMs = 0,
  ) {
    this.scratch = join(cfg.scratchDir, `zygote-${process.pid}-${randomBytes(4).toString("hex")}`);
  }

  get sandboxed(): boolean {
    return this.cfg.backend === "bwrap";
  }

  async start(): Promise<void> {
    this.startCount++;
    const generation = ++this.generation;
    const py = `${GRADER_MOUNT}/.venv/bin/python`;
    let cmd: string[];
    let env: Record<string, string>;
    if (this.sandboxed) {
      // The zygote's python needs the pids/memory room of one candidate plus its own.
      // Room for one judge and one candidate next to the two zygotes.
      this.cg =
        this.cfg.cgroups === false
          ? null
          : createCgroup({ pids: this.limits.pids + 12, memoryMb: this.limits.memoryMb + 192, cpus: 1 });
      const argv = [
        py,
        "-s",
        "-P",
        `${GRADER_MOUNT}/runner.py`,
        "--mode",
        "sandbox",
        "--ini",
        `${GRADER_MOUNT}/pytest.ini`,
        ...(this.cfg.candidateTemplate === false ? ["--no-candidate-template"] : []),
      ];
      // CAP_SYS_ADMIN and CAP_SETPCAP exist only in the sandbox's own user namespace: the first
      // makes fresh namespaces per judge and candidate, the second empties their bounding sets.
      const inner = bwrapArgv(
        {
          cfg: this.cfg,
          limits: this.limits,
          // The judge's workspace paths exist (empty, read-only) before any request, so that the
          // zygote can parse pytest's configuration for them once; each judge mounts a fresh
          // tmpfs over /box and makes them anew.
          extra: ["--dir", "/box", "--dir", "/box/ws", "--dir", "/box/out", "--dir", "/box/tmp"],
          chdir: "/tmp",
          capAdd: ["CAP_SYS_ADMIN", "CAP_SETPCAP"],
          readOnlyRoot: true,
        },
        argv,
      );
      ({ argv: cmd, env } = confinedArgv(this.cfg, this.limits, this.cg?.dirs ?? [], inner, {
        cpuLimit: false,
        dropUid: true,
      }));
    } else {
      mkdirSync(this.scratch, { recursive: true });
      const dir = this.cfg.graderDir;
      const argv = [
        join(dir, ".venv/bin/python"),
        "-s",
        "-P",
        join(dir, "runner.py"),
        "--mode",
        "process",
        "--ini",
        join(dir, "pytest.ini"),
        "--scratch",
        this.scratch,
        ...(this.cfg.candidateTemplate === false ? ["--no-candidate-template"] : []),
      ];
      ({ argv: cmd } = confinedArgv(this.cfg, this.limits, [], argv, { cpuLimit: false, dropUid: false }));
      env = { ...SANDBOX_ENV, AGENTLAB_CGROUPS: "" };
    }
    const [file, ...args] = cmd;
    const child = spawn(file ?? "/bin/sh", args, {
      env: env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    child.stderr.on("data", (b: Buffer) => {
      this.stderr = (this.stderr + b.toString("utf8")).slice(-8192);
    });
    child.stdin.on("error", () => undefined); // a dead zygote shows up as a lost answer instead
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const ready = await this.nextLine(30_000);
    if (generation !== this.generation) throw new Error("the grading sandbox was stopped while it started");
    if (!ready || !readyLine(ready)) {
      const why = this.stderr;
      this.stop();
      throw new Error(
        `grading sandbox failed to start: ${why.trim() || (ready ? `unexpected first line ${ready.slice(0, 200)}` : "no answer")}`,
      );
    }
    this.baselineProcs = this.cg?.procs().length ?? 0;
    this.baselineMemoryKb = this.cg?.memoryKb() ?? 0;
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

  /**
   * Grades one request. Never throws for candidate behaviour; a broken sandbox is restarted.
   * An abort (the agent's shutdown, a cancel) kills the sandbox and answers `interrupted`.
   */
  async request(req: RunnerRequest, signal?: AbortSignal): Promise<RunnerResponse> {
    return (await this.session(req, [], signal))[0] ?? lost("no answer");
  }

  /**
   * A judge session: `req`'s candidate and then each of `more` (same task, limits and isolation),
   * one answer each, in order. Each further candidate is sent only after the previous answer.
   * An answer that is lost, late or for another candidate ends the session: the sandbox is
   * replaced and the candidates after it answer as lost (or interrupted, after an abort).
   */
  async session(
    req: RunnerRequest,
    more: RunnerCandidate["candidate"][],
    signal?: AbortSignal,
    onAnswer?: (index: number, res: RunnerResponse) => void,
  ): Promise<RunnerResponse[]> {
    // An abort answers at once, also while the sandbox is still starting; it is killed, not waited for.
    // The listener goes when the request does: a job's signal outlives many requests (an audit).
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<null>((resolve) => {
      if (!signal || signal.aborted) return resolve(null);
      onAbort = () => resolve(null);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await this.exclusive(() => this.grade(req, more, aborted, signal, onAnswer));
    } finally {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  private async grade(
    req: RunnerRequest,
    more: RunnerCandidate["candidate"][],
    aborted: Promise<null>,
    signal?: AbortSignal,
    onAnswer?: (index: number, res: RunnerResponse) => void,
  ): Promise<RunnerResponse[]> {
    const total = more.length + 1;
    const out: RunnerResponse[] = [];
    let sent = 0;
    const key = more.length === 0 && req.isolation === "judge" && this.lingerMs > 0 ? lingerKey(req) : null;
    const resumed = key !== null && this.lingering?.key === key && this.lingering.left > 0 ? this.lingering : null;
    if (this.lingering && !resumed) await this.endLingering();
    if (resumed) clearTimeout(resumed.timer);
    const rest = (r: RunnerResponse) => {
      while (out.length < total) out.push({ ...r, unsent: out.length >= sent });
      return out;
    };
    const interrupted = () => {
      this.stop();
      return rest(emptyResponse({ interrupted: String(signal?.reason ?? "aborted") }));
    };
    if (signal?.aborted) return interrupted();
    if (!this.child) {
      const starting = this.start();
      if (signal) starting.catch(() => undefined); // an abort may win the race; its failure is expected
      await (signal ? Promise.race([starting, aborted]) : starting);
    }
    if (signal?.aborted) return interrupted();
    const child = this.child;
    if (!child) return rest(lost("sandbox not running"));
    for (let k = 0; k < total; k++) {
      this.cg?.resetPeak();
      const before = this.cg?.counters();
      const id = randomBytes(6).toString("hex");
      const sessionSize = total > 1 ? total : key !== null ? LINGER_CANDIDATES : null;
      const message =
        k === 0 && !resumed
          ? CoreRunnerRequest.parse({
              id,
              ...req,
              addressSpaceLimit: !this.cg,
              ...(sessionSize !== null ? { session: sessionSize } : {}),
            })
          : CoreRunnerCandidate.parse({ id, candidate: k === 0 ? req.candidate : more[k - 1] });
      const body = Buffer.from(JSON.stringify(message));
      child.stdin?.write(Buffer.concat([Buffer.from(`${body.length}\n`), body]));
      sent++;
      const waiting = this.nextLine((req.limits.wallTimeoutS + 15) * 1000);
      const line = signal ? await Promise.race([waiting, aborted]) : await waiting;
      if (signal?.aborted) return interrupted();
      const res = line ? parseAnswer(line) : lost(`no answer from the runner: ${this.stderr.slice(-500)}`);
      const after = this.cg?.counters();
      res.cgroup_peak_kb = after?.peakMemoryKb ?? null;
      if (
        before &&
        after &&
        !res.limit &&
        (after.oomKills > before.oomKills || after.pidsMaxHits > before.pidsMaxHits)
      ) {
        res.limit = "resource_limit";
        res.limit_detail = after.oomKills > before.oomKills ? "memory limit (OOM kill)" : "process limit (pids.max)";
      }
      const why = res.runner_lost ? "runner lost" : res.id !== id ? "answer for another request" : null;
      out.push(res);
      onAnswer?.(k, res);
      if (why) {
        this.replacedBecause = why;
        this.stop();
        return rest(lost(`the grading sandbox was replaced (${why}) before this candidate was graded`));
      }
    }
    if (key !== null) {
      // The session stays open: its processes (supervisor, reaper, template) are expected until
      // it ends, when the checks below run (endLingering).
      const left = (resumed ? resumed.left : LINGER_CANDIDATES) - 1;
      const timer = setTimeout(() => void this.exclusive(() => this.endLingering()), this.lingerMs);
      timer.unref();
      this.lingering = { key, left, timer };
      return out;
    }
    await this.checkAfterRequest();
    return out;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** The key of the request whose session this sandbox keeps open, if any (the grader prefers it). */
  get lingeringOn(): string | null {
    return this.lingering && this.lingering.left > 0 ? this.lingering.key : null;
  }

  /** Ends a lingering session: its supervisor closes the template and exits; then the usual checks. */
  private async endLingering(): Promise<void> {
    const open = this.lingering;
    if (!open) return;
    clearTimeout(open.timer);
    this.lingering = null;
    const child = this.child;
    if (!child) return;
    if (open.left > 0) {
      // After its last candidate the session has ended by itself: no end then.
      const body = Buffer.from(JSON.stringify(RunnerSessionEnd.parse({ end: true })));
      child.stdin?.write(Buffer.concat([Buffer.from(`${body.length}\n`), body]));
    }
    await this.checkAfterRequest();
  }

  private async checkAfterRequest(): Promise<void> {
    // Anything unusual: never reuse this sandbox for another candidate. The request's own processes
    // exit just after it answers, so the count gets a moment to return to its baseline.
    const extra = await this.settled();
    const grown = this.cg ? this.cg.memoryKb() > this.baselineMemoryKb + MEMORY_SLACK_KB : false;
    const why = extra ? "a process outlived its request" : grown ? "memory did not return to its baseline" : null;
    if (why) {
      this.replacedBecause = why;
      this.stop();
    }
  }

  /**
   * True when more processes than at start are still there after about 500 ms. Polled every
   * millisecond at first: the request's processes are usually gone within a few, and this wait
   * is on every grade's path.
   */
  private async settled(): Promise<boolean> {
    if (!this.cg) return false;
    const deadline = performance.now() + 500;
    for (let i = 0; performance.now() < deadline; i++) {
      if (this.cg.procs().length <= this.baselineProcs) return false;
      await new Promise((r) => setTimeout(r, i < 40 ? 1 : 10));
    }
    return this.cg.procs().length > this.baselineProcs;
  }

  /** Why the sandbox was last replaced (diagnostics). */
  replacedBecause: string | null = null;

  /** The sandbox's processes now (cgroup members), for diagnostics and tests. */
  processes(): number[] {
    return this.cg?.procs() ?? [];
  }

  /** How many times this sandbox was (re)started. */
  get starts(): number {
    return this.startCount;
  }

  stop(): void {
    if (this.lingering) clearTimeout(this.lingering.timer);
    this.lingering = null;
    this.generation++;
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
