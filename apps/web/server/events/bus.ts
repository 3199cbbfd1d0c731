import { QueueEvent } from "@agentlab/core";
import type { Logger } from "../logger";

// The queue's events in this process. A terminal write is announced twice: in-process by the code
// that made it (right after its transaction committed: no round trip), and by the NOTIFY the same
// transaction issued, which reaches every instance, this one included. The bus delivers each event
// once: a NOTIFY that echoes an event already delivered in-process is dropped, any other NOTIFY (a
// write by another instance, or by code that did not announce it here) is delivered.

/** LISTEN on one channel; resolves to the unlisten function (Database.listen in @agentlab/db). */
export type Listen = (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;

export type EventBus = {
  /** In-process announcement of a committed write. */
  publish(event: QueueEvent): void;
  /** Subscribes; returns the unsubscribe function. */
  on(listener: (event: QueueEvent) => void): () => void;
  /** Starts delivering NOTIFYs of `channel`; idempotent. */
  listen(listen: Listen, channel: string): Promise<void>;
  close(): Promise<void>;
};

// An echo comes back within milliseconds; an entry older than this was never echoed (no listener).
const ECHO_WINDOW_MS = 60_000;

const keyOf = (e: QueueEvent) =>
  e.kind === "job"
    ? `job:${e.jobId}:${e.state}`
    : e.kind === "experiment"
      ? `experiment:${e.experimentId}`
      : `collection:${e.collectionId}`;

export function createEventBus(log: Logger): EventBus {
  const listeners = new Set<(event: QueueEvent) => void>();
  // key -> times this key was delivered in-process and its NOTIFY not yet seen.
  const awaitingEcho = new Map<string, { n: number; at: number }>();
  let unlisten: (() => Promise<void>) | null = null;

  const deliver = (event: QueueEvent) => {
    for (const fn of listeners) {
      try {
        fn(event);
      } catch (err) {
        log.error({ err, event }, "queue event listener failed");
      }
    }
  };
  const prune = (now: number) => {
    for (const [k, v] of awaitingEcho) if (now - v.at > ECHO_WINDOW_MS) awaitingEcho.delete(k);
  };
  const onNotify = (payload: string) => {
    let event: QueueEvent;
    try {
      event = QueueEvent.parse(JSON.parse(payload));
    } catch (err) {
      log.warn({ err, payload: payload.slice(0, 200) }, "unreadable queue notification ignored");
      return;
    }
    const key = keyOf(event);
    const echo = awaitingEcho.get(key);
    if (echo) {
      if (--echo.n <= 0) awaitingEcho.delete(key);
      return;
    }
    deliver(event);
  };

  return {
    publish(event) {
      // Only a listening bus gets echoes to drop.
      if (unlisten) {
        const now = Date.now();
        if (awaitingEcho.size > 10_000) prune(now);
        const key = keyOf(event);
        awaitingEcho.set(key, { n: (awaitingEcho.get(key)?.n ?? 0) + 1, at: now });
      }
      deliver(event);
    },
    on(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async listen(listen, channel) {
      if (unlisten) return;
      unlisten = await listen(channel, onNotify);
    },
    async close() {
      const u = unlisten;
      unlisten = null;
      listeners.clear();
      await u?.();
    },
  };
}
