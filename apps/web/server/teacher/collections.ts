import { DomainError, PROMPT_TEMPLATE_HASH, paramsHash, type CollectionConfig } from "@agentlab/core";
import { collectableTasks, getProvider, insertCollection, type CollectionRow } from "@agentlab/db";
import type { Services } from "../services";

/**
 * Stores a collection of a split's tasks for one provider (not started). Test-split tasks are
 * refused by `collectableTasks` before anything is written. Used by the router and by experiments.
 */
export async function createCollection(
  services: Pick<Services, "db">,
  input: CollectionConfig,
  createdBy: string | null,
): Promise<CollectionRow> {
  const provider = await getProvider(services.db, input.providerId);
  if (!provider) throw new DomainError("NOT_FOUND", "no such teacher provider");
  const tasks = await collectableTasks(services.db, {
    splitId: input.splitId,
    parts: input.parts,
    taskIds: input.taskIds,
  });
  if (tasks.length === 0) throw new DomainError("PRECONDITION_FAILED", "no train/dev tasks to collect");
  return insertCollection(services.db, {
    name: input.name ?? `${provider.name} × ${input.parts.join("+")} n=${input.nSamples}`,
    experimentId: input.experimentId ?? null,
    splitId: input.splitId,
    providerId: provider.id,
    providerKind: provider.kind,
    model: provider.model,
    parts: input.parts,
    taskIds: input.taskIds ?? null,
    nSamples: input.nSamples,
    params: input.params,
    paramsHash: paramsHash(input.params, { kind: provider.kind, extra: provider.extraParams }),
    promptHash: PROMPT_TEMPLATE_HASH,
    concurrency: input.concurrency,
    budgetUsd: input.budgetUsd ?? null,
    maxRetries: input.maxRetries,
    timeoutMs: input.timeoutMs,
    grade: input.grade,
    tasksTotal: tasks.length,
    samplesTotal: tasks.length * input.nSamples,
    createdBy,
  });
}
