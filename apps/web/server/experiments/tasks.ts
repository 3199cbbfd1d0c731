import { AsyncLocalStorage } from "node:async_hooks";
import { exportTaskPage, getSplit, type Db } from "@agentlab/db";
import { DomainError, type SplitPart, type TaskSpec } from "@agentlab/core";

// The runner advances an experiment every time one of its jobs ends, and the evaluation stages
// need the whole dev (or test) part each time. Inside `withExperimentTaskCache` (the runner wraps
// each experiment's advance in it) a part is loaded once per experiment and process, so an
// experiment works from the task set it started with; outside it (pages, tests) every call reads.
type Cache = Map<string, Promise<TaskSpec[]>>;
const scope = new AsyncLocalStorage<Cache>();
const caches = new Map<string, Cache>();

/** Runs `fn` with the experiment's split-part cache in scope. */
export function withExperimentTaskCache<T>(experimentId: string, fn: () => Promise<T>): Promise<T> {
  let cache = caches.get(experimentId);
  if (!cache) caches.set(experimentId, (cache = new Map()));
  return scope.run(cache, fn);
}

/** Drops the cache of an experiment that stopped running (or of one not seen any more). */
export function forgetExperimentTasks(experimentId: string): void {
  caches.delete(experimentId);
}

/** Every task of one part of a frozen split, in task-id order. */
export function splitTasks(db: Db, splitId: string, part: SplitPart): Promise<TaskSpec[]> {
  const cache = scope.getStore();
  if (!cache) return loadSplitTasks(db, splitId, part);
  const key = `${splitId}:${part}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = loadSplitTasks(db, splitId, part);
    cache.set(key, hit);
    // A failed read is not remembered: the next advance reads again.
    hit.catch(() => cache.delete(key));
  }
  return hit;
}

async function loadSplitTasks(db: Db, splitId: string, part: SplitPart): Promise<TaskSpec[]> {
  const split = await getSplit(db, splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  const out: TaskSpec[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await exportTaskPage(db, { poolId: split.poolId, splitId, part, after, limit: 500 });
    out.push(...page.items);
    if (!page.nextCursor) return out;
    after = page.nextCursor;
  }
}
