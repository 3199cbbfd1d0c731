import type { Logger } from "../logger";

// The one background-loop helper: the experiment runner, the audit and teacher syncs and the
// reaper are all "run this when woken, and every so often anyway". Wakes are coalesced: a wake
// while a run is going on schedules one more run after it (with every key asked for meanwhile),
// never a second concurrent one. The periodic run is the safety sweep for the event-driven loops
// (a NOTIFY missed while the listener reconnected) and the clock for the reaper (lease expiry is
// time, not an event).

/** What a run is asked to cover: the keys woken since the last run, or everything. */
export type Wakes<K> = { all: true } | { all: false; keys: ReadonlySet<K> };

export type Loop<K = never> = {
  /** Without a key: a full run. */
  wake(key?: K): void;
  /** Resolves once no run is going on or pending (tests, shutdown). */
  idle(): Promise<void>;
  stop(): Promise<void>;
};

export type LoopOptions<K> = {
  name: string;
  log: Logger;
  run(wakes: Wakes<K>): Promise<void>;
  /** The periodic full run; 0 disables it. */
  everyMs: number;
  /** A full run right away (what the old pollers did at start: pick up work left by the last process). */
  runAtStart?: boolean;
  /** Pause between back-to-back runs, so that a burst of wakes cannot spin a loop at full speed. */
  minGapMs?: number;
};

export function startLoop<K = never>(opts: LoopOptions<K>): Loop<K> {
  const log = opts.log.child({ loop: opts.name });
  let pending: { all: true } | { all: false; keys: Set<K> } | null = null;
  let current: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  const runPending = async () => {
    while (pending && !stopped) {
      const wakes = pending;
      pending = null;
      try {
        await opts.run(wakes);
      } catch (err) {
        log.error({ err }, "background run failed; it runs again at the next wake or sweep");
      }
      if (pending && opts.minGapMs) await new Promise((r) => setTimeout(r, opts.minGapMs));
    }
  };
  const schedule = () => {
    if (current || stopped) return;
    current = runPending().finally(() => {
      current = null;
      if (pending && !stopped) schedule();
    });
  };
  const wake = (key?: K) => {
    if (stopped) return;
    if (key === undefined) pending = { all: true };
    else if (!pending) pending = { all: false, keys: new Set([key]) };
    else if (!pending.all) pending.keys.add(key);
    schedule();
  };

  if (opts.everyMs > 0) {
    timer = setInterval(() => wake(), opts.everyMs);
    timer.unref();
  }
  if (opts.runAtStart) wake();

  return {
    wake,
    async idle() {
      while (current) await current;
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await current;
    },
  };
}
