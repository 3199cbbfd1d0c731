import type { Server } from "node:http";
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
import { runStage } from "./stages";
import { createRetryBook, type RetryOptions } from "./retries";

/** A non-domain error thrown by one stage, carrying which (for the bounded retries in `tick`). */
export class StageCrash extends Error {
  constructor(
    readonly stage: string,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

// The server-side loop that advances experiments. All state is in the database (stage rows, their
// job ids and outputs), so stopping the loop at any point and starting a new one resumes.

export type ExperimentRunner = {
  tick(): Promise<void>;
  advance(experimentId: string): Promise<void>;
  stop(): Promise<void>;
};

export function createExperimentRunner(
  services: Services,
  opts: { intervalMs?: number; autoStart?: boolean; retries?: RetryOptions } = {},
): ExperimentRunner {
  const log = services.log.child({ component: "experiments" });
  const retries = createRetryBook(opts.retries);
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;
  let stopped = false;

  async function advance(experimentId: string): Promise<void> {
    const exp = await getExperiment(services.db, experimentId);
    if (!exp || exp.state !== "running") return;
    const config = ExperimentConfig.parse(exp.config);
    const plan = stagePlan(config);
    const rows = new Map<string, StageRow>((await listStages(services.db, experimentId)).map((r) => [r.key, r]));
    const status = nextStages(plan, [...rows.values()]);
    if (status.status === "failed")
      return setExperimentState(services.db, experimentId, "failed", `${status.stage}: ${status.error}`);
    if (status.status === "succeeded") return setExperimentState(services.db, experimentId, "succeeded");
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
      } catch (err) {
        // Domain refusals end the stage (and the experiment); anything else is retried, a bounded
        // number of times with backoff (tick).
        if (!isDomainError(err)) throw new StageCrash(stage.key, err);
        log.warn({ experimentId, stage: stage.key, err }, "experiment stage failed");
        await updateStage(services.db, experimentId, stage.key, { state: "failed", error: err.message });
        await setExperimentState(services.db, experimentId, "failed", `${stage.key}: ${err.message}`);
        return;
      }
    }
  }

  async function tick(): Promise<void> {
    for (const id of await runningExperimentIds(services.db)) {
      if (stopped) return;
      if (!retries.due(id)) continue;
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
        if (!final) continue;
        // If even this write fails (database away), the next tick finds the experiment running and
        // starts a new bounded round.
        await (stage ? updateStage(services.db, id, stage, { state: "failed", error: final }) : Promise.resolve())
          .then(() => setExperimentState(services.db, id, "failed", final))
          .catch((e: unknown) => log.error({ experimentId: id, err: e }, "recording the experiment's failure failed"));
      }
    }
  }

  const loop = () => {
    if (stopped) return;
    current = tick().finally(() => {
      current = null;
      if (!stopped) timer = setTimeout(loop, opts.intervalMs ?? 2000);
    });
  };
  if (opts.autoStart !== false) timer = setTimeout(loop, 0);

  return {
    tick,
    advance,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}

/** Started by createApp; stops when the HTTP server closes. */
export function startExperimentRunner(services: Services, server: Server): ExperimentRunner {
  const runner = createExperimentRunner(services);
  server.on("close", () => void runner.stop());
  return runner;
}
