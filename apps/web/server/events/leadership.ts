import type { TryLead } from "@agentlab/db";
import type { Logger } from "../logger";

// Exactly one web instance runs the background loops (runner, reaper, syncs): the one holding the
// advisory lock (db leadership.ts). The others retry every `retryMs`; when the leader dies its
// session ends, the lock is free, and the next retry of a follower takes the loops over. A leader
// that loses its lock connection stops its loops first (lost), then retries like any follower.

/** The lock key: any constant shared by all instances of one deployment ("agentlab" in ASCII). */
export const LEADER_LOCK_KEY = 0x61676c62;

export type Leadership = {
  isLeader(): boolean;
  stop(): Promise<void>;
};

export function startLeadership(opts: {
  tryLead: TryLead;
  /** Starts the loops; resolves to their stopper. */
  lead(): Promise<() => Promise<void>>;
  retryMs: number;
  log: Logger;
}): Leadership {
  const log = opts.log.child({ component: "leadership" });
  let leader = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let release: (() => Promise<void>) | null = null;
  let stopLoops: (() => Promise<void>) | null = null;
  let current: Promise<void> | null = null;

  const attempt = async () => {
    const held = await opts.tryLead(LEADER_LOCK_KEY, Math.max(100, Math.floor(opts.retryMs / 2)));
    if (!held || stopped) {
      await held?.release();
      return schedule();
    }
    release = held.release;
    stopLoops = await opts.lead();
    leader = true;
    log.info("this instance leads the background loops");
    void held.lost.then(async () => {
      if (stopped || !leader) return;
      leader = false;
      log.warn("leadership lost (its database connection failed): stopping the loops");
      await stopLoops?.();
      stopLoops = null;
      release = null;
      schedule();
    });
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(run, opts.retryMs);
    timer.unref();
  };
  const run = () => {
    current = attempt()
      .catch((err: unknown) => {
        log.warn({ err }, "trying to lead failed; retrying");
        schedule();
      })
      .finally(() => (current = null));
  };
  run();

  return {
    isLeader: () => leader,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
      leader = false;
      await stopLoops?.();
      await release?.();
    },
  };
}
