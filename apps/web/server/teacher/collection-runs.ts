import { DomainError, scrubSecrets, scrubbedMessage } from "@agentlab/core";
import {
  activeCollectionIds,
  getCollection,
  notifyCollectionWake,
  updateActiveCollection,
  type Db,
} from "@agentlab/db";
import type { Services } from "../services";
import { runCollection, type RunnerOptions, type RunStop } from "./runner";

// Teacher collections are the leader's work, like experiments: a collection is created (or
// canceled) in the database by whichever instance took the request, which then wakes the
// leader's collection loop (background.ts) over the queue's events. The loop runs every
// collection the database says is queued or running and is not running here yet, so a run that a
// restart or a change of leader interrupted resumes from its stored items (runner.ts), and it
// aborts any run here whose collection was canceled. A leader that stops its loops aborts its
// runs first and waits for them: two instances never ask a teacher for the same collection.

type Live = { abort: AbortController; done: Promise<void> };
// The runs of this process, per database handle: each instance sees its own runs only, as each
// process does in production. Two instances in one process (the multi-instance tests) share this
// module; keyed by id alone, a new leader would skip a collection whose old leader's aborted run
// had not yet ended there, and with no sweep nothing would start it again.
const runs = new WeakMap<Db, Map<string, Live>>();
const liveOn = (db: Db): Map<string, Live> => {
  const mine = runs.get(db) ?? new Map<string, Live>();
  runs.set(db, mine);
  return mine;
};

/** Starts (or joins) the run of a queued or interrupted collection in this process. */
export function startCollection(services: Services, id: string, opts: RunnerOptions = {}): Promise<void> {
  const live = liveOn(services.db);
  const existing = live.get(id);
  if (existing) return existing.done;
  const abort = new AbortController();
  const log = services.log.child({ collectionId: id });
  const done = runCollection(services, id, abort.signal, opts)
    .catch(async (err: unknown) => {
      // Scrubbed like every provider error: an unexpected one may still carry request details.
      log.error(
        { error: scrubbedMessage(err), stack: err instanceof Error ? scrubSecrets(err.stack ?? "") : undefined },
        "collection failed",
      );
      // Stopping the loops can fail a run's last query; that run is the next leader's, not a failure.
      if (abort.signal.reason === ("shutdown" satisfies RunStop)) return;
      const reason = err instanceof DomainError ? err.message : "internal error (see the server log)";
      await updateActiveCollection(services.db, id, { state: "failed", stopReason: reason, finishedAt: new Date() });
    })
    .finally(() => live.delete(id))
    // The experiment that owns the collection waits for its run to end (its collect stage).
    .then(() => wakeOwner(services, id))
    .catch((err: unknown) => log.error({ err }, "waking the collection's experiment failed"));
  live.set(id, { abort, done });
  return done;
}

async function wakeOwner(services: Services, collectionId: string): Promise<void> {
  const col = await getCollection(services.db, collectionId);
  if (col?.experimentId) await services.queue.wakeExperiment(col.experimentId);
}

/** The leader's pass (background.ts): every unfinished collection runs here, every canceled one here stops. */
export async function syncCollectionRuns(services: Services): Promise<void> {
  const active = new Set(await activeCollectionIds(services.db));
  const live = liveOn(services.db);
  for (const id of active) if (!live.has(id)) void startCollection(services, id);
  for (const [id, run] of live) if (!active.has(id)) run.abort.abort("canceled" satisfies RunStop);
}

/** Aborts this process's runs on `services`' database and waits for them (the loops are stopping). */
export async function stopCollectionRuns(services: Pick<Services, "db">): Promise<void> {
  const mine = [...liveOn(services.db).values()];
  for (const r of mine) r.abort.abort("shutdown" satisfies RunStop);
  await Promise.all(mine.map((r) => r.done));
}

/** Tells the leader (whichever instance it is) to look at this collection: created, or canceled. */
export async function wakeCollectionRuns(services: Pick<Services, "db" | "queue">, id: string): Promise<void> {
  await notifyCollectionWake(services.db, id);
  services.queue.events.publish({ kind: "collection", collectionId: id });
}

/** Records the cancel (the run's own last write then never overrides it) and wakes the leader to stop the run; false when it had ended. */
export async function cancelCollection(services: Pick<Services, "db" | "queue">, id: string): Promise<boolean> {
  const canceled = await updateActiveCollection(services.db, id, {
    state: "canceled",
    stopReason: "canceled by a user",
    finishedAt: new Date(),
  });
  if (canceled) await wakeCollectionRuns(services, id);
  return canceled;
}

/**
 * Resolves once the collection's run has ended (the database says so and no run of it is live
 * here): what tests and benches wait on, whichever loop started the run.
 */
export async function awaitCollection(services: Pick<Services, "db">, id: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const live = liveOn(services.db);
  for (;;) {
    const run = live.get(id);
    if (run) await run.done;
    const col = await getCollection(services.db, id);
    const ended = !col || (col.state !== "queued" && col.state !== "running");
    if (ended && !live.has(id)) return;
    if (Date.now() > deadline) throw new Error(`collection ${id} still ${col?.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
