import type { ChildProcess } from "node:child_process";

/** Signals a whole process group (the child was spawned `detached`, so its pid is the group id). */
export function killGroup(child: ChildProcess, sig: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    /* the group is gone already */
  }
}

export type GroupGuard = { aborted(): boolean; dispose(): void };

/**
 * Cancel for a process group: on abort SIGTERM the group, SIGKILL it after `graceMs`.
 * `dispose` (on exit) drops the listener and the pending SIGKILL timer.
 */
export function guardGroup(child: ChildProcess, signal: AbortSignal | undefined, graceMs: number): GroupGuard {
  let aborted = false;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    aborted = true;
    killGroup(child, "SIGTERM");
    timer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    aborted: () => aborted,
    dispose() {
      signal?.removeEventListener("abort", onAbort);
      if (timer) clearTimeout(timer);
    },
  };
}
