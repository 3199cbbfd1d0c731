import {
  DomainError,
  LocalPolicySpec,
  REFERENCE_POLICIES,
  TeacherPolicySpec,
  type CollectPart,
  type EpisodeBranching,
  type EpisodeBudget,
  type EpisodeJobPayload,
  type EpisodePolicyRequest,
  type EpisodePolicySpec,
} from "@agentlab/core";
import { collectableTasks, getProvider, getTask, toTaskSpec, type Db } from "@agentlab/db";
import type { Services } from "../services";

// Episode jobs are enqueued here only. The one place that hands a task's reference to a policy:
// the scripted controls that apply it get it as `controlReference`; any other policy never does
// (the payload's contract refuses it there). The judge takes its own copy from the task. A
// teacher's episodes, like its collections, only ever run on a frozen split's train or dev tasks
// (the task leaves for a provider), named through that split.

export type EpisodeRequest = {
  taskRowId: string;
  policy: EpisodePolicyRequest;
  seed: number;
  /** Required for a teacher: the task must be in this split's train or dev part. */
  splitId?: string;
  budget?: Partial<EpisodeBudget>;
  branching?: Partial<EpisodeBranching>;
};

export async function episodePayload(db: Db, req: EpisodeRequest): Promise<EpisodeJobPayload> {
  const row = await getTask(db, req.taskRowId);
  if (!row) throw new DomainError("NOT_FOUND", `task ${req.taskRowId} not found`);
  const task = toTaskSpec(row);
  const policy = await resolvePolicy(db, req, row.taskId);
  const control = policy.kind === "scripted" && REFERENCE_POLICIES.includes(policy.name);
  return {
    task,
    taskRowId: req.taskRowId,
    policy,
    seed: req.seed,
    ...(req.budget ? { budget: req.budget } : {}),
    ...(req.branching ? { branching: req.branching } : {}),
    ...(control ? { controlReference: task.reference } : {}),
  };
}

/** A teacher's provider must answer chat completions, and the task must be one a teacher may see. */
async function resolvePolicy(db: Db, req: EpisodeRequest, taskKey: string): Promise<EpisodePolicySpec> {
  const p = req.policy;
  if (p.kind === "scripted") return p;
  // A local model runs on the agent: the task never leaves it, so no split is required.
  if (p.kind === "local") return LocalPolicySpec.parse(p);
  const provider = await getProvider(db, p.providerId);
  if (!provider || provider.archivedAt) throw new DomainError("NOT_FOUND", "no such teacher provider");
  if (provider.kind !== "openai" || !provider.baseUrl)
    throw new DomainError(
      "PRECONDITION_FAILED",
      "a teacher episode needs an OpenAI-compatible provider with a base URL",
    );
  if (!req.splitId)
    throw new DomainError(
      "BAD_REQUEST",
      "a teacher episode names its split: its task must be a train or dev task there",
    );
  // collectableTasks refuses test tasks and unfrozen splits itself, as for collections.
  await collectableTasks(db, { splitId: req.splitId, parts: ["train", "dev"], taskIds: [taskKey] });
  return TeacherPolicySpec.parse({ ...p, model: p.model ?? provider.model });
}

export async function enqueueEpisode(
  services: Pick<Services, "db" | "queue">,
  req: EpisodeRequest,
  createdBy?: string,
) {
  const payload = await episodePayload(services.db, req);
  return services.queue.enqueue({ type: "episode", payload, ...(createdBy ? { createdBy } : {}) });
}

export type SplitEpisodesRequest = Omit<EpisodeRequest, "taskRowId" | "seed" | "splitId"> & {
  splitId: string;
  /** Train by default; never test (refused by collectableTasks). */
  parts?: CollectPart[];
  /** Seeds 0..seeds-1 per task. */
  seeds: number;
  /** At most this many tasks (in task-id order), all when absent. */
  limit?: number;
};

/** One job per (task, seed) over a frozen split's train (or dev) tasks; returns the job ids. */
export async function enqueueSplitEpisodes(
  services: Pick<Services, "db" | "queue">,
  req: SplitEpisodesRequest,
  createdBy?: string,
): Promise<string[]> {
  const { splitId, parts, seeds, limit, ...rest } = req;
  const rows = await collectableTasks(services.db, { splitId, parts: parts ?? ["train"] });
  const ids: string[] = [];
  for (const row of rows.slice(0, limit ?? rows.length))
    for (let seed = 0; seed < seeds; seed++)
      ids.push((await enqueueEpisode(services, { ...rest, splitId, taskRowId: row.id, seed }, createdBy)).id);
  return ids;
}
