import {
  DomainError,
  REFERENCE_POLICIES,
  type EpisodeBranching,
  type EpisodeBudget,
  type EpisodeJobPayload,
  type EpisodePolicySpec,
} from "@agentlab/core";
import { getTask, toTaskSpec, type Db } from "@agentlab/db";
import type { Services } from "../services";

// Episode jobs are enqueued here only. The one place that hands a task's reference to a policy:
// the scripted controls that apply it get it as `controlReference`; any other policy never does
// (the payload's contract refuses it there). The judge takes its own copy from the task.

export type EpisodeRequest = {
  taskRowId: string;
  policy: EpisodePolicySpec;
  seed: number;
  budget?: Partial<EpisodeBudget>;
  branching?: Partial<EpisodeBranching>;
};

export async function episodePayload(db: Db, req: EpisodeRequest): Promise<EpisodeJobPayload> {
  const row = await getTask(db, req.taskRowId);
  if (!row) throw new DomainError("NOT_FOUND", `task ${req.taskRowId} not found`);
  const task = toTaskSpec(row);
  const control = req.policy.kind === "scripted" && REFERENCE_POLICIES.includes(req.policy.name);
  return {
    task,
    taskRowId: req.taskRowId,
    policy: req.policy,
    seed: req.seed,
    ...(req.budget ? { budget: req.budget } : {}),
    ...(req.branching ? { branching: req.branching } : {}),
    ...(control ? { controlReference: task.reference } : {}),
  };
}

export async function enqueueEpisode(
  services: Pick<Services, "db" | "queue">,
  req: EpisodeRequest,
  createdBy?: string,
) {
  const payload = await episodePayload(services.db, req);
  return services.queue.enqueue({ type: "episode", payload, ...(createdBy ? { createdBy } : {}) });
}
