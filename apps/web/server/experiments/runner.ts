import type { Server } from "node:http";
import { getExperiment, listStages, runningExperimentIds, setExperimentState, updateStage, type StageRow } from "@agentlab/db";
import { ExperimentConfig, isDomainError, nextStages, stagePlan } from "@agentlab/core";
import type { Services } from "../services";
import { runStage } from "./stages";

// The server-side loop that advances experiments. All state is in the database (stage rows, their
// job ids and outputs), so stopping the loop at any point and starting a new one resumes.

export type ExperimentRunner = { tick(): Promise<void>; advance(experimentId: string): Promise<void>; stop(): Promise<void> };

export function createExperimentRunner(services: Services, opts: { intervalMs?: number; autoStart?: boolean } = {}): ExperimentRunner {
  const log = services.log.child({ component: "experiments" });
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
    if (status.status === "failed") return setExperimentState(services.db, experimentId, "failed", `${status.stage}: ${status.error}`);
    if (status.status === "succeeded") return setExperimentState(services.db, experimentId, "succeeded");
    for (const stage of status.runnable) {
      const row = rows.get(stage.key);
      if (!row) continue;
      try {
        const res = await runStage({ services, experimentId, config, stage, row, rows });
        await updateStage(services.db, experimentId, stage.key, { state: res.state, output: res.output, ...(res.jobIds ? { jobIds: res.jobIds } : {}) });
        rows.set(stage.key, { ...row, state: res.state, output: res.output });
      } catch (err) {
        // Domain refusals end the stage (and the experiment); anything else is retried next tick.
        if (!isDomainError(err)) throw err;
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
      try {
        await advance(id);
      } catch (err) {
        log.error({ experimentId: id, err }, "advancing experiment failed; retrying next tick");
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
