// Which idle agents hear of new jobs. Broadcasting "jobs available" to every agent for
// every job makes each idle agent send a claim: with 100 idle agents one job costs 100 claim
// statements, 99 of them empty, and the winner waits behind them. So an enqueue of n jobs wakes n
// idle agents (the longest idle first), and only those claim.
//
// A targeted wake can miss: the woken agent may not fit the job (labels, GPUs, sandbox), lose the
// race to another agent's claim, or get the wake an instant before it starts waiting (the nudge
// arrives right behind its empty claim's answer). Misses fall back to the broadcast: a woken agent
// that does not claim within `timeoutMs` wakes everyone; one that claims nothing, or leaves, is
// reported (`idle`/`gone` return true) so that the gateway broadcasts when work is still queued
// (a lost race needs nothing). A targeted wake is never slower than the broadcast by more than that.

export type Waker<S> = {
  /** A claim arrived from the agent: not idle; a wake it was sent is being answered (no timeout). */
  claiming(socket: S): void;
  /** Its claim found nothing: it waits for a nudge (or its poll). True: it had been woken for it. */
  idle(socket: S): boolean;
  /** Its claim got a job, or it reports a result: not idle, any wake answered. */
  busy(socket: S): void;
  /** True: it had been woken and had not claimed yet. */
  gone(socket: S): boolean;
  /** Wakes up to `count` idle agents of this instance; returns how many were woken. */
  wake(count: number): number;
  close(): void;
};

export function createWaker<S>(opts: {
  emit(socket: S): void;
  /** The old behaviour: every agent on every instance. */
  broadcast(): void;
  timeoutMs: number;
}): Waker<S> {
  // Insertion order = idle since: the longest idle first (its claim loop is surely waiting).
  const idle = new Set<S>();
  // Woken agents: the timer runs until their claim arrives (null: it arrived, its answer is pending).
  const woken = new Map<S, NodeJS.Timeout | null>();
  const answered = (s: S) => {
    const t = woken.get(s);
    if (t) clearTimeout(t);
    return woken.delete(s);
  };
  return {
    claiming(s) {
      idle.delete(s);
      const t = woken.get(s);
      if (t) {
        clearTimeout(t);
        woken.set(s, null);
      }
    },
    idle(s) {
      idle.add(s);
      // Woken and still found nothing: someone else took the job, or it did not fit this agent.
      return answered(s);
    },
    busy(s) {
      answered(s);
      idle.delete(s);
    },
    gone(s) {
      idle.delete(s);
      return answered(s);
    },
    wake(count) {
      let n = 0;
      for (const s of idle) {
        if (n >= count) break;
        idle.delete(s);
        const t = setTimeout(() => {
          woken.delete(s);
          opts.broadcast();
        }, opts.timeoutMs);
        t.unref();
        woken.set(s, t);
        opts.emit(s);
        n++;
      }
      return n;
    },
    close() {
      woken.forEach((t) => t && clearTimeout(t));
      woken.clear();
      idle.clear();
    },
  };
}
