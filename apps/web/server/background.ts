import { EVENTS_CHANNEL, type QueueEvent } from "@agentlab/core";
import type { Services } from "./services";
import { createExperimentRunner, type ExperimentRunner } from "./experiments/runner";
import { syncAudits } from "./audits/sync";
import { syncEpisodes } from "./episodes/store";
import { syncTeacher } from "./teacher/loops";
import { stopCollectionRuns, syncCollectionRuns } from "./teacher/collection-runs";
import { startReaper } from "./agents/reaper";
import { startLoop, type Loop } from "./events/loop";
import type { Listen } from "./events/bus";

// The one consumer of the queue's events: a job's end wakes the owner of that job at once (the
// experiment runner for an experiment's jobs, the audit sync for audit jobs, the episode store for
// episode jobs, the teacher sync for collection and replay grading and tokenize jobs), and a
// collection created or canceled wakes
// the collection runs (teacher/collection-runs.ts). Each loop also runs every AGENTLAB_SWEEP_MS
// as a safety sweep, and the reaper on its own clock (events/loop.ts).

export type Background = {
  runner: ExperimentRunner;
  audits: Loop;
  episodes: Loop;
  teacher: Loop;
  collections: Loop;
  reaper: Loop;
  stop(): Promise<void>;
};

export type BackgroundOptions = {
  /** LISTEN for the other instances' events (and the ones this process did not announce itself). */
  listen?: Listen;
};

export async function startBackground(services: Services, opts: BackgroundOptions = {}): Promise<Background> {
  const log = services.log.child({ component: "background" });
  const sweepMs = services.env.AGENTLAB_SWEEP_MS;
  const runner = createExperimentRunner(services, { sweepMs });
  const audits = startLoop({
    name: "audits",
    log,
    everyMs: sweepMs,
    runAtStart: true,
    run: () => syncAudits(services).then(() => {}),
  });
  // An episode job's trajectory, states and branches are stored when the job succeeds.
  const episodes = startLoop({
    name: "episodes",
    log,
    everyMs: sweepMs,
    runAtStart: true,
    run: () => syncEpisodes(services).then(() => {}),
  });
  const teacher = startLoop({
    name: "teacher",
    log,
    everyMs: sweepMs,
    runAtStart: true,
    // Grading moves a collection (and a replay) toward done, which the verify stage waits for.
    run: () => syncTeacher(services).then(() => runner.wake()),
  });
  // At start it resumes the collections a restart or a change of leader interrupted.
  const collections = startLoop({
    name: "collections",
    log,
    everyMs: sweepMs,
    runAtStart: true,
    run: () => syncCollectionRuns(services),
  });
  const reaper = startReaper(services);

  const route = (e: QueueEvent) => {
    if (e.kind === "experiment") return runner.wake(e.experimentId);
    if (e.kind === "collection") return collections.wake();
    if (e.type === "audit") return audits.wake();
    if (e.type === "episode") return episodes.wake();
    // An experiment's own jobs are its runner's; the others (collection and replay grading,
    // tokenize) are the teacher's bookkeeping.
    if (e.experimentId) runner.wake(e.experimentId);
    else teacher.wake();
  };
  const unsubscribe = services.queue.events.on(route);
  if (opts.listen) await services.queue.events.listen(opts.listen, EVENTS_CHANNEL);
  log.info({ sweepMs, listening: Boolean(opts.listen) }, "background loops started");

  return {
    runner,
    audits,
    episodes,
    teacher,
    collections,
    reaper,
    async stop() {
      unsubscribe();
      await services.queue.events.close();
      await Promise.all([
        runner.stop(),
        audits.stop(),
        episodes.stop(),
        teacher.stop(),
        collections.stop(),
        reaper.stop(),
      ]);
      // Nothing can start a run now: the ones going on end before another leader resumes them.
      await stopCollectionRuns(services);
    },
  };
}
