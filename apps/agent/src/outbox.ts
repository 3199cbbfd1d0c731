import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { AGENT_EVENTS, WriteAck } from "@agentlab/core";
import type { ServerLink } from "./link";
import { RequestRefused } from "./link";

export type OutboxItem = { event: string; attemptId: string; payload: Record<string, unknown> };
type Delivered = (ack: WriteAck | null) => void;

/**
 * Ordered, at-least-once delivery of an attempt's writes (logs, progress, artifacts, result).
 * Every item is appended to a spool file first, so output computed while the server is away,
 * or before the agent itself restarts, is still delivered; the server drops stale attempts'.
 */
export class Outbox {
  private queue: OutboxItem[] = [];
  private flushing: Promise<void> | null = null;
  private idleWaiters: Array<() => void> = [];
  private deliveredHooks = new Map<OutboxItem, Delivered>();
  private readonly spoolPath: string;
  // Spool writes run one after another, so a truncation never overtakes an append queued before it.
  private spoolWrites: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly link: ServerLink,
    stateDir: string,
    private readonly log: Logger,
    private readonly onStale: (attemptId: string) => void,
  ) {
    this.spoolPath = join(stateDir, "outbox.jsonl");
  }

  /** Loads what a previous run of the agent left undelivered. */
  async restore(): Promise<number> {
    await mkdir(join(this.spoolPath, ".."), { recursive: true });
    const raw = await readFile(this.spoolPath, "utf8").catch(() => "");
    // A SIGKILL can tear the last append: skip what does not parse instead of refusing to start.
    const lines = raw.split("\n").filter(Boolean);
    this.queue = lines.flatMap((l) => {
      try {
        const item = JSON.parse(l) as OutboxItem;
        // A result spooled by the previous process asked for its next job in the same ack; this
        // process has nobody waiting for that ack, so the job claimed for it would sit on the
        // agent's name, unrun, until its lease expired (and then be re-run).
        return [
          item.event === AGENT_EVENTS.result ? { ...item, payload: { ...item.payload, claimNext: false } } : item,
        ];
      } catch {
        this.log.warn({ line: l.slice(0, 200) }, "skipping a torn line in the outbox spool");
        return [];
      }
    });
    return this.queue.length;
  }

  /** Queues an item; the promise resolves with its ack once delivered (null if dropped). */
  push(item: OutboxItem): Promise<WriteAck | null> {
    const delivered = new Promise<WriteAck | null>((resolve) => this.deliveredHooks.set(item, resolve));
    this.queue.push(item);
    this.spool(() => appendFile(this.spoolPath, JSON.stringify(item) + "\n"));
    this.kick();
    return delivered;
  }

  private spool(write: () => Promise<void>) {
    this.spoolWrites = this.spoolWrites
      .then(write)
      .catch((err: unknown) => this.log.error({ err }, "spool write failed"));
  }

  /** Resolves once everything queued so far is delivered (or dropped as stale). */
  drained(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Gives up delivering in this process (shutdown, refused credential): pending pushes resolve
   * with null at once, and the spool, written to the end, keeps them for the next run.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.deliveredHooks.forEach((resolve) => resolve(null));
    this.deliveredHooks.clear();
    this.idleWaiters.splice(0).forEach((fn) => fn());
    await this.spoolWrites;
  }

  kick() {
    if (this.closed || this.flushing || !this.link.connected) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = null;
      if (this.queue.length && this.link.connected) this.kick();
    });
  }

  private async flush() {
    while (this.queue.length && !this.closed) {
      const item = this.queue[0];
      if (!item) break;
      let ack: WriteAck | null = null;
      try {
        ack = await this.link.request(item.event, item.payload, WriteAck);
      } catch (err) {
        if (err instanceof RequestRefused && err.code === "ABORTED") return;
        // A request the server refuses outright (malformed) will never succeed: drop it, loudly.
        this.log.error({ err, event: item.event }, "server refused an outbox item; dropping it");
      }
      // The server read the write by its job's contract and refused it (a refused progress event
      // also ended the attempt): a bug in this agent's handler, said loudly.
      if (ack?.refused)
        this.log.error(
          { attemptId: item.attemptId, event: item.event, refused: ack.refused },
          "server refused a write",
        );
      this.queue.shift();
      this.deliveredHooks.get(item)?.(ack);
      this.deliveredHooks.delete(item);
      if (ack && !ack.accepted) {
        this.log.warn(
          { attemptId: item.attemptId, event: item.event },
          "attempt is stale; dropping its pending writes",
        );
        const dropped = this.queue.filter((q) => q.attemptId === item.attemptId);
        dropped.forEach((q) => (this.deliveredHooks.get(q)?.(null), this.deliveredHooks.delete(q)));
        this.queue = this.queue.filter((q) => q.attemptId !== item.attemptId);
        this.onStale(item.attemptId);
      }
    }
    if (this.closed) return;
    // Everything queued is delivered: the spool holds nothing worth replaying any more.
    if (this.queue.length === 0) this.spool(() => writeFile(this.spoolPath, ""));
    this.idleWaiters.splice(0).forEach((fn) => fn());
  }
}
