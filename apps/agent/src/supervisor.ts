import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import {
  AGENT_EVENTS,
  ClaimAck,
  HeartbeatAck,
  HelloAck,
  PROTOCOL_VERSION,
  type Capabilities,
  type ClaimedJob,
} from "@agentlab/core";
import { CredentialRefused, RequestRefused, ServerLink } from "./link";
import { Outbox } from "./outbox";
import { LogStream } from "./log-stream";
import { uploadArtifact } from "./artifacts";
import type { AbortReason, AgentRuntimeInfo, JobHandler, JobOutcome } from "./jobs/types";

export type SupervisorOptions = {
  serverUrl: string;
  credential: string;
  stateDir: string;
  capabilities: Capabilities;
  handlers: Record<string, JobHandler>;
  runtime: Omit<AgentRuntimeInfo, "serverUrl" | "credential" | "stateDir">;
  log: Logger;
  drain?: boolean;
  /** Jobs run at once (one claim loop each). */
  concurrency?: number;
  /** How often to poll for work when no nudge arrives. */
  pollMs?: number;
  /**
   * How long an interrupted job's handler may take to return after its abort signal before the
   * supervisor stops waiting and reports the interruption itself (a handler that ignores the
   * signal must not hold a shutdown or a cancel hostage).
   */
  abandonAfterMs?: number;
  /** Re-runs the sandbox self-test when the server asks (Agents page); returns the new capabilities. */
  retestSandbox?: () => Promise<Capabilities>;
};

/** The process exit code of an agent whose credential the server refused (revoked): not retried by a service manager that knows it. */
export const EXIT_CREDENTIAL_REFUSED = 3;

// `done`: the handler returned and the result is queued in the outbox (spooled), delivered or not.
type Running = {
  job: ClaimedJob;
  controller: AbortController;
  reason: AbortReason | null;
  renewedAt: number;
  stale: boolean;
  done: boolean;
  /** Why the agent failed it from outside its handler (failRunning). */
  failure?: string;
};

/**
 * The agent's supervisor: the only part that talks to the server. It claims jobs, heartbeats the
 * leases of running attempts (never the job process), fences itself when a lease cannot be renewed,
 * and delivers every write through the outbox.
 */
export class Supervisor {
  private link: ServerLink;
  private outbox: Outbox;
  private running = new Map<string, Running>();
  private stopping = false;
  private drain: boolean;
  private heartbeatMs = 10_000;
  private leaseTtlMs = 30_000;
  private helloDone = false;
  private timers: NodeJS.Timeout[] = [];
  private loops: Promise<void>[] = [];
  private refused: CredentialRefused | null = null;
  private refusedHooks: Array<(err: CredentialRefused) => void> = [];
  private capabilities: Capabilities;

  constructor(private readonly opts: SupervisorOptions) {
    this.drain = opts.drain ?? false;
    this.capabilities = opts.capabilities;
    this.link = new ServerLink(opts.serverUrl, opts.credential, opts.log);
    this.outbox = new Outbox(this.link, opts.stateDir, opts.log, (attemptId) =>
      this.abortAttempt(attemptId, "lease_lost"),
    );
    this.link.onConnect(() => void this.hello());
    // Until hello is answered on the new connection, leases are not judged: the self-fencing
    // check would otherwise see the whole outage as unrenewed time and stop jobs the server kept.
    this.link.socket.on("disconnect", () => (this.helloDone = false));
    this.link.socket.on(AGENT_EVENTS.jobsAvailable, () => this.wakeAll());
    this.link.socket.on(
      AGENT_EVENTS.cancel,
      (msg: { attemptId?: string }) => msg.attemptId && this.abortAttempt(msg.attemptId, "canceled"),
    );
    this.link.socket.on(AGENT_EVENTS.selftest, () => void this.retest());
    this.link.socket.on(AGENT_EVENTS.revoked, () => this.link.refuse("this agent was revoked by an admin"));
    this.link.onCredentialRefused((err) => {
      this.refused = err;
      opts.log.error(`${err.message}; stopping (enroll this box again to bring it back)`);
      this.refusedHooks.forEach((fn) => fn(err));
      void this.stop(0);
    });
  }

  /** Why the server will not talk to this agent any more, once it said so. */
  get credentialRefused(): CredentialRefused | null {
    return this.refused;
  }

  onCredentialRefused(fn: (err: CredentialRefused) => void) {
    if (this.refused) fn(this.refused);
    else this.refusedHooks.push(fn);
  }

  async start() {
    const restored = await this.outbox.restore();
    if (restored) this.opts.log.info({ items: restored }, "delivering writes spooled by a previous run");
    this.link.connect();
    this.timers.push(setInterval(() => void this.heartbeat(), 1000));
    this.loops = Array.from({ length: this.opts.concurrency ?? 1 }, () => this.claimLoop());
  }

  setDrain(drain: boolean) {
    this.drain = drain;
  }

  private retesting = false;
  /** The self-test again (bubblewrap installed meanwhile, say); hello again tells the server the result. */
  private async retest() {
    if (!this.opts.retestSandbox || this.retesting) return;
    this.retesting = true;
    try {
      this.capabilities = await this.opts.retestSandbox();
      this.opts.log.info({ sandbox: this.capabilities.sandbox }, "sandbox self-test re-run");
      await this.hello();
    } catch (err) {
      this.opts.log.error({ err }, "sandbox re-test failed");
    } finally {
      this.retesting = false;
    }
  }

  private async hello() {
    const ack = await this.link
      .request(
        AGENT_EVENTS.hello,
        { version: PROTOCOL_VERSION, capabilities: this.capabilities, drain: this.drain },
        HelloAck,
      )
      .catch((err) => {
        this.opts.log.error({ err }, "hello refused");
        return null;
      });
    if (!ack) return;
    this.heartbeatMs = ack.heartbeatIntervalMs;
    this.leaseTtlMs = ack.leaseTtlMs;
    this.helloDone = true;
    // Renew the leases of jobs that kept running while the server was away, right now: the server
    // answers which are stale (reaped meanwhile), and those stop; the rest carry on and their
    // spooled results are accepted. Each gets a fresh renewal window from now.
    const now = Date.now();
    for (const r of this.running.values()) r.renewedAt = now;
    this.lastBeat = 0;
    void this.heartbeat();
    this.outbox.kick();
    this.wakeAll();
  }

  private async claimLoop() {
    while (!this.stopping) {
      if (this.drain || !this.helloDone || !this.link.connected) {
        await this.idle(this.opts.pollMs ?? 5000);
        continue;
      }
      const ack = await this.link
        .request(AGENT_EVENTS.claim, { version: PROTOCOL_VERSION }, ClaimAck)
        .catch(() => null);
      let job = ack?.job ?? null;
      if (!job && !this.stopping) await this.idle(this.opts.pollMs ?? 5000);
      while (job) job = await this.runJob(job);
    }
  }

  private sleepers = new Set<() => void>();
  /** Waits for a nudge (jobs available, connected) or the poll interval. */
  private idle(ms: number) {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  private wakeAll() {
    [...this.sleepers].forEach((fn) => fn());
  }

  private lastBeat = 0;
  private async heartbeat() {
    const now = Date.now();
    if (!this.link.connected || !this.helloDone) return;
    // Self-fencing while connected: a lease the server did not renew within its TTL may already
    // belong to another agent. While disconnected the server may simply be down (a restart), and
    // its reaper waits for us after it starts, so jobs keep running, their output is spooled, and
    // the first heartbeat after the reconnect decides (stale attempts stop, their output is refused).
    for (const [id, r] of this.running) if (now - r.renewedAt > this.leaseTtlMs) this.abortAttempt(id, "lease_lost");
    if (now - this.lastBeat < this.heartbeatMs) return;
    this.lastBeat = now;
    const attempts = [...this.running.values()].map((r) => ({ jobId: r.job.jobId, attemptId: r.job.attemptId }));
    const ack = await this.link
      .request(AGENT_EVENTS.heartbeat, { version: PROTOCOL_VERSION, attempts, drain: this.drain }, HeartbeatAck)
      .catch(() => null);
    if (!ack) return;
    this.leaseTtlMs = ack.leaseTtlMs;
    for (const a of attempts) {
      const r = this.running.get(a.attemptId);
      if (r && !ack.stale.includes(a.attemptId)) r.renewedAt = now;
    }
    ack.stale.forEach((id) => this.abortAttempt(id, "lease_lost"));
    ack.cancel.forEach((id) => this.abortAttempt(id, "canceled"));
  }

  /**
   * Fails every running job with `why`: a failure in the agent's background work (an unhandled
   * rejection) cannot be pinned on one job, and the process carries on instead of exiting.
   */
  failRunning(why: string) {
    for (const [id, r] of this.running)
      if (!r.done) {
        r.failure ??= why;
        this.abortAttempt(id, "failed");
      }
  }

  private abortAttempt(attemptId: string, reason: AbortReason) {
    const r = this.running.get(attemptId);
    if (!r || r.controller.signal.aborted) return;
    if (reason === "lease_lost") r.stale = true;
    r.reason = reason;
    this.opts.log.warn({ jobId: r.job.jobId, attemptId, reason }, "stopping job");
    r.controller.abort();
  }

  /** Runs one job to its delivered result; returns the next job if the server claimed one with the ack. */
  private async runJob(job: ClaimedJob): Promise<ClaimedJob | null> {
    const log = this.opts.log.child({ jobId: job.jobId, attemptId: job.attemptId, type: job.type });
    const r: Running = {
      job,
      controller: new AbortController(),
      reason: null,
      renewedAt: Date.now(),
      stale: false,
      done: false,
    };
    this.running.set(job.attemptId, r);
    const ref = { version: PROTOCOL_VERSION, jobId: job.jobId, attemptId: job.attemptId };
    const push = (event: string, payload: Record<string, unknown>) =>
      r.stale
        ? Promise.resolve(null)
        : this.outbox.push({ event, attemptId: job.attemptId, payload: { ...ref, ...payload } });
    const logs = new LogStream((chunks) => push(AGENT_EVENTS.log, { chunks }));
    const maxDuration = setTimeout(() => this.abortAttempt(job.attemptId, "timeout"), job.maxDurationS * 1000);
    const workDir = join(this.opts.stateDir, "work", job.attemptId);
    await mkdir(workDir, { recursive: true });
    let progressSeq = 0;
    log.info("job started");
    const handler = this.opts.handlers[job.type];
    const run = async (): Promise<JobOutcome> =>
      handler
        ? handler({
            ...job,
            signal: r.controller.signal,
            abortReason: () => r.reason,
            log,
            emitLog: (stream, data) => logs.write(stream, data),
            progress: (data) => push(AGENT_EVENTS.progress, { seq: progressSeq++, data }),
            uploadArtifact: async (path, meta) => {
              const sha256 = await uploadArtifact(this.opts.serverUrl, this.opts.credential, path);
              push(AGENT_EVENTS.artifact, { name: meta.name, kind: meta.kind, sha256, meta: meta.meta ?? {} });
              return sha256;
            },
            // Not through the outbox: an answer is needed now, and a stale attempt gets none.
            ask: (event, data, reply, timeoutMs) =>
              r.stale
                ? Promise.reject(new RequestRefused("STALE", "this attempt is no longer current"))
                : this.link.request(event, { ...ref, ...data }, reply, r.controller.signal, timeoutMs),
            workDir,
            agent: {
              ...this.opts.runtime,
              serverUrl: this.opts.serverUrl,
              credential: this.opts.credential,
              stateDir: this.opts.stateDir,
            },
          })
        : { reason: "infra_error", error: `this agent cannot run jobs of type ${job.type}` };
    const finished = run().catch((err: unknown): JobOutcome => {
      log.error({ err }, "job handler crashed");
      return { reason: "infra_error", error: err instanceof Error ? err.message : String(err) };
    });
    let outcome = await Promise.race([finished, this.abandoned(r, log)]);
    clearTimeout(maxDuration);
    if (r.reason === "shutdown" && outcome.reason !== "succeeded")
      outcome = { ...outcome, reason: "infra_error", error: "agent shut down during the job" };
    if (r.failure) outcome = { ...outcome, reason: "infra_error", error: `agent failure during the job: ${r.failure}` };
    logs.flush();
    // Logs are queued before the result, so the server has them all before the terminal state.
    const claimNext = !this.stopping && !this.drain;
    const delivered = push(AGENT_EVENTS.result, {
      reason: outcome.reason,
      exitCode: outcome.exitCode ?? null,
      signal: outcome.signal ?? null,
      result: outcome.result ?? {},
      error: outcome.error ?? null,
      lastLogSeq: logs.lastSeq,
      claimNext,
    });
    r.done = true;
    log.info({ reason: outcome.reason, stale: r.stale }, "job finished");
    const ack = await delivered;
    this.running.delete(job.attemptId);
    await rm(workDir, { recursive: true, force: true });
    return ack?.next ?? null;
  }

  /**
   * Resolves, once the job was told to stop and its handler did not return within
   * `abandonAfterMs`, with the outcome the interruption means; never resolves otherwise.
   */
  private abandoned(r: Running, log: Logger): Promise<JobOutcome> {
    const after = this.opts.abandonAfterMs ?? 7000;
    return new Promise((resolve) => {
      r.controller.signal.addEventListener(
        "abort",
        () => {
          setTimeout(() => {
            log.error(
              { reason: r.reason, afterMs: after },
              "job handler ignored its abort signal; reporting the interruption without it",
            );
            resolve(interruptedOutcome(r.reason));
          }, after).unref();
        },
        { once: true },
      );
    });
  }

  /**
   * Stop claiming; give running jobs `graceMs` to finish on their own (0: none), then interrupt
   * them (they are requeued as infra_error), deliver what can be delivered within 5 s, disconnect.
   * What is not delivered stays in the spool for the next run.
   */
  async stop(graceMs: number) {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeAll();
    const deadline = Date.now() + graceMs;
    while (this.running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const id of this.running.keys()) this.abortAttempt(id, "shutdown");
    while ([...this.running.values()].some((r) => !r.done)) await new Promise((r) => setTimeout(r, 50));
    // Nothing will be accepted from a refused credential; otherwise deliver while the server listens.
    if (!this.refused && this.link.connected)
      await Promise.race([this.outbox.drained(), new Promise((r) => setTimeout(r, 5000))]);
    await this.outbox.close();
    this.link.close(); // also ends claim requests waiting for a connection
    await Promise.all(this.loops);
    this.timers.forEach(clearInterval);
  }
}

/** What an interruption means when the handler could not say it: only a cancel or a timeout is final. */
function interruptedOutcome(reason: AbortReason | null): JobOutcome {
  if (reason === "canceled")
    return { reason: "canceled", error: "canceled (the job did not stop within the grace period)" };
  if (reason === "timeout") return { reason: "timeout", error: "max_duration exceeded" };
  const why: Partial<Record<AbortReason, string>> = {
    shutdown: "agent shut down during the job",
    failed: "agent failure",
  };
  return { reason: "infra_error", error: `interrupted: ${(reason && why[reason]) ?? "lease lost"}` };
}
