import { io, type Socket } from "socket.io-client";
import type { z } from "zod";
import type { Logger } from "pino";
import { AckEnvelope, fullJitterMs } from "@agentlab/core";

export class RequestRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

// Reconnect attempts are cheap (one refused TCP connect while the server is down), and an agent
// that notices late a server that is back holds finished results that long: cap the wait at 4 s,
// so a restarted server has its agents back within a few seconds. Jitter still spreads them.
export const RECONNECT_BASE_MS = 250;
export const RECONNECT_CAP_MS = 4000;
/** An unacknowledged request is sent again after a full-jitter wait of at most 5 s (retried until acknowledged or refused). */
const REQUEST_RETRY = { baseMs: 100, capMs: 5000 };

/** The server says this credential is no longer valid: retrying cannot help. */
export class CredentialRefused extends Error {
  constructor(message: string) {
    super(message);
  }
}

/**
 * The agent's socket to the server. Requests are acknowledged and retried (at-least-once);
 * reconnection uses full-jitter backoff, and `onConnect` hooks re-run hello and flush the outbox.
 */
export class ServerLink {
  readonly socket: Socket;
  private closed = false;
  // Wakes requests waiting for a connection that will never come (closed or refused).
  private closedCtl = new AbortController();
  private reconnectAttempt = 0;
  private connectHooks: Array<() => void> = [];
  private refusedHooks: Array<(err: CredentialRefused) => void> = [];

  constructor(
    url: string,
    credential: string,
    private readonly log: Logger,
    private readonly timeoutMs = 15_000,
  ) {
    this.socket = io(url, {
      path: "/socket.io",
      auth: { token: credential },
      reconnection: false,
      autoConnect: false,
      transports: ["websocket"],
    });
    this.socket.on("connect", () => {
      this.reconnectAttempt = 0;
      this.log.info("connected to server");
      this.connectHooks.forEach((fn) => fn());
    });
    this.socket.on("disconnect", (reason) => {
      this.log.warn({ reason }, "disconnected from server");
      this.scheduleReconnect();
    });
    this.socket.on("connect_error", (err) => {
      // The gateway answers "unauthorized" only for an unknown or revoked credential (a database
      // failure is "unavailable"), so this one is final: stop instead of retrying forever.
      if (err.message === "unauthorized")
        return this.refuse("the server refused this agent's credential: it was revoked or never enrolled there");
      this.log.warn({ err: err.message }, "cannot reach server");
      this.scheduleReconnect();
    });
  }

  onConnect(fn: () => void) {
    this.connectHooks.push(fn);
  }

  /** Called once when the server refuses the credential (connect refused, or told "revoked"). */
  onCredentialRefused(fn: (err: CredentialRefused) => void) {
    this.refusedHooks.push(fn);
  }

  refuse(message: string) {
    if (this.closed) return;
    this.closed = true;
    this.closedCtl.abort();
    this.socket.disconnect();
    const err = new CredentialRefused(message);
    this.refusedHooks.forEach((fn) => fn(err));
  }

  connect() {
    this.socket.connect();
  }

  private scheduleReconnect() {
    if (this.closed || this.socket.connected) return;
    // Full jitter (core fullJitterMs, the one backoff formula): a delay in [0, min(cap, base·2^n)].
    const delay = fullJitterMs(this.reconnectAttempt++, { baseMs: RECONNECT_BASE_MS, capMs: RECONNECT_CAP_MS });
    setTimeout(() => {
      if (!this.closed && !this.socket.connected) this.socket.connect();
    }, delay).unref();
  }

  get connected() {
    return this.socket.connected;
  }

  private waitConnected(signal?: AbortSignal): Promise<void> {
    if (this.socket.connected) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => (this.socket.off("connect", done), resolve());
      this.socket.on("connect", done);
      signal?.addEventListener("abort", done, { once: true });
      this.closedCtl.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Sends until acknowledged; throws RequestRefused when the server rejects the request itself. */
  async request<S extends z.ZodType>(
    event: string,
    payload: unknown,
    schema: S,
    signal?: AbortSignal,
    /** How long one try waits for its ack (default: the link's); a slow answer is sent again after it. */
    timeoutMs = this.timeoutMs,
  ): Promise<z.output<S>> {
    for (let attempt = 0; ; attempt++) {
      if (this.closed || signal?.aborted) throw new RequestRefused("ABORTED", `${event} aborted`);
      await this.waitConnected(signal);
      if (!this.socket.connected) continue;
      try {
        const reply = await this.emitUntilDisconnect(event, payload, timeoutMs);
        const parsed = AckEnvelope.parse(reply);
        if (parsed.ok) return schema.parse(parsed.data);
        if (parsed.error.code !== "INTERNAL") throw new RequestRefused(parsed.error.code, parsed.error.message);
        this.log.warn({ event, error: parsed.error }, "server error; retrying");
      } catch (err) {
        if (err instanceof RequestRefused) throw err;
        this.log.debug({ event, err: (err as Error).message }, "request not acknowledged; retrying");
      }
      await sleep(fullJitterMs(attempt, REQUEST_RETRY), signal);
    }
  }

  // A request in flight when the socket drops is never answered: give up on it at the drop (and
  // resend after the reconnect) instead of waiting out the ack timeout.
  private emitUntilDisconnect(event: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const dropped = () => reject(new Error("disconnected before the ack"));
      this.socket.once("disconnect", dropped);
      this.socket
        .timeout(timeoutMs)
        .emitWithAck(event, payload)
        .then(resolve, reject)
        .finally(() => this.socket.off("disconnect", dropped));
    });
  }

  close() {
    this.closed = true;
    this.closedCtl.abort();
    this.socket.disconnect();
  }
}
