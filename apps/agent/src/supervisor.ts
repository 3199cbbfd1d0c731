import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { AGENT_EVENTS, ClaimAck, HeartbeatAck, HelloAck, PROTOCOL_VERSION, type Capabilities, type ClaimedJob } from "@agentlab/core";
import { ServerLink } from "./link";
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
};

type Running = { job: ClaimedJob; controller: AbortController; reason: AbortReason | null; renewedAt: number; stale: boolean };

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

  constructor(private readonly opts: SupervisorOptions) {
    this.drain = opts.drain ?? false;
    this.link = new ServerLink(opts.serverUrl, opts.credential, opts.log);
    this.outbox = new Outbox(this.link, opts.stateDir, opts.log, (attemptId) => this.abortAttempt(attemptId, "lease_lost"));
    this.link.onConnect(() => void this.hello());
    this.link.socket.on(AGENT_EVENTS.jobsAvailable, () => this.wakeAll());
    this.link.socket.on(AGENT_EVENTS.cancel, (msg: { attemptId?: string }) => msg.attemptId && this.abortAttempt(msg.attemptId, "canceled"));
    this.link.socket.on(AGENT_EVENTS.revoked, () => {
      opts.log.error("this agent was revoked by an admin; stopping");
      void this.stop(0);
    });
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

  private async hello() {
    const ack = await this.link.request(AGENT_EVENTS.hello, { version: PROTOCOL_VERSION, capabilities: this.opts.capabilities, drain: this.drain }, HelloAck).catch((err) => {
      this.opts.log.error({ err }, "hello refused");
      return null;
    });
    if (!ack) return;
    this.heartbeatMs = ack.heartbeatIntervalMs;
    this.leaseTtlMs = ack.leaseTtlMs;
    this.helloDone = true;
    this.outbox.kick();
    this.wakeAll();
  }

  private async claimLoop() {
    while (!this.stopping) {
      if (this.drain || !this.helloDone || !this.link.connected) {
        await this.idle(this.opts.pollMs ?? 5000);
        continue;
      }
      const ack = await this.link.request(AGENT_EVENTS.claim, { version: PROTOCOL_VERSION }, ClaimAck).catch(() => null);
      let job = ack?.job ?? null;
      if (!job) await this.idle(this.opts.pollMs ?? 5000);
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
    // Self-fencing: a lease not renewed within its TTL may already belong to another agent.
    for (const [id, r] of this.running) if (now - r.renewedAt > this.leaseTtlMs) this.abortAttempt(id, "lease_lost");
    if (!this.link.connected || !this.helloDone || now - this.lastBeat < this.heartbeatMs) return;
    this.lastBeat = now;
    const attempts = [...this.running.values()].map((r) => ({ jobId: r.job.jobId, attemptId: r.job.attemptId }));
    const ack = await this.link.request(AGENT_EVENTS.heartbeat, { version: PROTOCOL_VERSION, attempts, drain: this.drain }, HeartbeatAck).catch(() => null);
    if (!ack) return;
    this.leaseTtlMs = ack.leaseTtlMs;
    for (const a of attempts) {
      const r = this.running.get(a.attemptId);
      if (r && !ack.stale.includes(a.attemptId)) r.renewedAt = now;
    }
    ack.stale.forEach((id) => this.abortAttempt(id, "lease_lost"));
    ack.cancel.forEach((id) => this.abortAttempt(id, "canceled"));
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
    const r: Running = { job, controller: new AbortController(), reason: null, renewedAt: Date.now(), stale: false };
    this.running.set(job.attemptId, r);
    const ref = { version: PROTOCOL_VERSION, jobId: job.jobId, attemptId: job.attemptId };
    const push = (event: string, payload: Record<string, unknown>) => (r.stale ? Promise.resolve(null) : this.outbox.push({ event, attemptId: job.attemptId, payload: { ...ref, ...payload } }));
    const logs = new LogStream((chunks) => push(AGENT_EVENTS.log, { chunks }));
    const maxDuration = setTimeout(() => this.abortAttempt(job.attemptId, "timeout"), job.maxDurationS * 1000);
    const workDir = join(this.opts.stateDir, "work", job.attemptId);
    await mkdir(workDir, { recursive: true });
    let progressSeq = 0;
    log.info("job started");
    let outcome: JobOutcome;
    const handler = this.opts.handlers[job.type];
    try {
      outcome = handler
        ? await handler({
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
            workDir,
            agent: { ...this.opts.runtime, serverUrl: this.opts.serverUrl, credential: this.opts.credential, stateDir: this.opts.stateDir },
          })
        : { reason: "infra_error", error: `this agent cannot run jobs of type ${job.type}` };
    } catch (err) {
      log.error({ err }, "job handler crashed");
      outcome = { reason: "infra_error", error: err instanceof Error ? err.message : String(err) };
    }
    clearTimeout(maxDuration);
    if (r.reason === "shutdown" && outcome.reason !== "succeeded") outcome = { ...outcome, reason: "infra_error", error: "agent shut down during the job" };
    logs.flush();
    // Logs are queued before the result, so the server has them all before the terminal state.
    const claimNext = !this.stopping && !this.drain;
    const delivered = push(AGENT_EVENTS.result, { reason: outcome.reason, exitCode: outcome.exitCode ?? null, signal: outcome.signal ?? null, result: outcome.result ?? {}, error: outcome.error ?? null, lastLogSeq: logs.lastSeq, claimNext });
    log.info({ reason: outcome.reason, stale: r.stale }, "job finished");
    const ack = await delivered;
    this.running.delete(job.attemptId);
    await rm(workDir, { recursive: true, force: true });
    return ack?.next ?? null;
  }

  /** Graceful: stop claiming, give running jobs `graceMs`, then interrupt them, deliver, disconnect. */
  async stop(graceMs: number) {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeAll();
    const deadline = Date.now() + graceMs;
    while (this.running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const id of this.running.keys()) this.abortAttempt(id, "shutdown");
    while (this.running.size) await new Promise((r) => setTimeout(r, 50));
    await Promise.race([this.outbox.drained(), new Promise((r) => setTimeout(r, 5000))]);
    await Promise.all(this.loops);
    this.timers.forEach(clearInterval);
    this.link.close();
  }
}
