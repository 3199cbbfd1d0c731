import {
  getExperiment,
  listStages,
  runningExperimentIds,
  setExperimentState,
  updateStage,
  type StageRow,
} from "@agentlab/db";
import { ExperimentConfig, isDomainError, nextStages, stagePlan } from "@agentlab/core";
import type { Services } from "../services";
import { startLoop, type Loop, type Wakes } from "../events/loop";
import { runStage } from "./stages";
import { createRetryBook, type RetryOptions } from "./retries";
import { forgetExperimentTasks, withExperimentTaskCache } from "./tasks";
import { stopArmOfEndedStudy, wakeStudyArms } from "../studies/settle";

/** A non-domain error thrown by one stage, carrying which (for the bounded retries in `tick`). */
export class StageCrash extends Error {
  constructor(
    readonly stage: string,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

// Advances experiments. All state is in the database (stage rows, their job ids and outputs), so
// stopping at any point and starting again resumes. It runs when woken: one of the experiment's
// jobs ended, it was created or resumed, its teacher collection moved (background.ts), or a
// stage of it just succeeded (the next ones can start at once); plus a slow sweep over every
// running experiment for anything a missed notification left waiting.

export type ExperimentRunner = {
  /** One pass over every running experiment. */
  tick(): Promise<void>;
  advance(experimentId: string): Promise<void>;
  /** Without an id: a full pass. Coalesced: never two passes at once. */
  wake(experimentId?: string): void;
  /** Resolves when no woken pass is going on or pending. */
  idle(): Promise<void>;
  stop(): Promise<void>;
};

export const DEFAULT_SWEEP_MS = 30_000;

export function createExperimentRunner(
  services: Services,
  opts: { sweepMs?: number; autoStart?: boolean; retries?: RetryOptions } = {},
): ExperimentRunner {
  const log = services.log.child({ component: "experiments" });
  const retries = createRetryBook(opts.retries);
  let stopped = false;
  let loop: Loop<string> | null = null;
  const retryTimers = new Set<NodeJS.Timeout>();

  /** Ends a run as failed; a study arm's failure ends its study, so the other arms are woken to stop. */
  async function fail(experimentId: string, error: string): Promise<void> {
    await setExperimentState(services.db, experimentId, "failed", error);
    await wakeStudyArms(services, experimentId);
  }

  /** One step of one experiment; true when a stage ended (so the next can start without waiting). */
  async function step(experimentId: string): Promise<boolean> {
    const exp = await getExperiment(services.db, experimentId);
    if (!exp || exp.state !== "running" || (await stopArmOfEndedStudy(services, experimentId))) {
      forgetExperimentTasks(experimentId);
      return false;
    }
    const config = ExperimentConfig.parse(exp.config);
    const plan = stagePlan(config);
    const rows = new Map<string, StageRow>((await listStages(services.db, experimentId)).map((r) => [r.key, r]));
    const status = nextStages(plan, [...rows.values()]);
    if (status.status === "failed") {
      forgetExperimentTasks(experimentId);
      await fail(experimentId, `${status.stage}: ${status.error}`);
      return false;
    }
    if (status.status === "succeeded") {
      forgetExperimentTasks(experimentId);
      await setExperimentState(services.db, experimentId, "succeeded");
      return false;
    }
    let ended = false;
    for (const stage of status.runnable) {
      const row = rows.get(stage.key);
      if (!row) continue;
      try {
        const res = await runStage({ services, experimentId, config, stage, row, rows });
        await updateStage(services.db, experimentId, stage.key, {
          state: res.state,
          output: res.output,
          ...(res.jobIds ? { jobIds: res.jobIds } : {}),
        });
        rows.set(stage.key, { ...row, state: res.state, output: res.output });
        if (res.state !== row.state) ended = true;
      } catch (err) {
        // Domain refusals end the stage (and the experiment); anything else is retried, a bounded
        // number of times with backoff (tick).
        if (!isDomainError(err)) throw new StageCrash(stage.key, err);
        log.warn({ experimentId, stage: stage.key, err }, "experiment stage failed");
        await updateStage(services.db, experimentId, stage.key, { state: "failed", error: err.message });
        await fail(experimentId, `${stage.key}: ${err.message}`);
        forgetExperimentTasks(experimentId);
        return false;
      }
    }
    return ended;
  }

  const advance = (experimentId: string): Promise<void> =>
    withExperimentTaskCache(experimentId, () => step(experimentId)).then((ended) => {
      if (ended) loop?.wake(experimentId);
    });

  async function advanceWithRetries(id: string): Promise<void> {
    if (!retries.due(id)) return;
    try {
      await advance(id);
      retries.succeeded(id);
    } catch (err) {
      const stage = err instanceof StageCrash ? err.stage : null;
      const cause = err instanceof StageCrash ? err.cause : err;
      const final = retries.failed(id, stage, cause);
      log.error(
        { experimentId: id, stage, err: cause, failures: retries.attempts(id) },
        final ? "experiment failed: retries used up" : "advancing experiment failed; retrying with backoff",
      );
      if (!final) return wakeAfterBackoff(id);
      forgetExperimentTasks(id);
      // If even this write fails (database away), the next sweep finds the experiment running and
      // starts a new bounded round.
      await (stage ? updateStage(services.db, id, stage, { state: "failed", error: final }) : Promise.resolve())
        .then(() => fail(id, final))
        .catch((e: unknown) => log.error({ experimentId: id, err: e }, "recording the experiment's failure failed"));
    }
  }

  // Nothing else would wake an experiment whose advance crashed: its retry is a timer.
  function wakeAfterBackoff(id: string) {
    if (!loop) return;
    const t = setTimeout(() => {
      retryTimers.delete(t);
      loop?.wake(id);
    }, retries.waitMs(id) + 5);
    t.unref();
    retryTimers.add(t);
  }

  async function tick(): Promise<void> {
    for (const id of await runningExperimentIds(services.db)) {
      if (stopped) return;
      await advanceWithRetries(id);
    }
  }

  async function run(wakes: Wakes<string>): Promise<void> {
    if (wakes.all) return tick();
    for (const id of wakes.keys) {
      if (stopped) return;
      await advanceWithRetries(id);
    }
  }

  if (opts.autoStart !== false)
    loop = startLoop<string>({
      name: "experiments",
      log,
      run,
      everyMs: opts.sweepMs ?? DEFAULT_SWEEP_MS,
      runAtStart: true,
      minGapMs: 10,
    });

  return {
    tick,
    advance,
    wake: (id) => loop?.wake(id),
    idle: async () => loop?.idle(),
    async stop() {
      stopped = true;
      for (const t of retryTimers) clearTimeout(t);
      await loop?.stop();
    },
  };
}
