import { DomainError, budget, sftLine, type BudgetResult } from "@agentlab/core";
import { allDatasetSamples, getDataset, setDatasetTokenCounts, type DatasetRow } from "@agentlab/db";
import type { Services } from "../services";
import { writeSnapshot, type Built } from "./datasets";

// Token matching as a dataset operation: a child snapshot of whole tasks drawn from a parent until
// its supervised tokens (as the base model's tokenizer counted them, per sample, in the parent's
// tokenize job) reach B ± 0.5% (core studies/budget.ts: stratified by source group, seeded). Arms
// of a study that train on budgets of one B differ in what their data is, not in how much.

export type BudgetInput = {
  datasetId: string;
  /** B: the supervised tokens the child should hold. */
  tokens: number;
  seed: number;
  name?: string;
  createdBy: string | null;
};

export async function budgetDataset(
  services: Services,
  input: BudgetInput,
): Promise<{ dataset: DatasetRow; budget: Omit<BudgetResult, "sampleIndices"> }> {
  const parent = await getDataset(services.db, input.datasetId);
  if (!parent) throw new DomainError("NOT_FOUND", "no such dataset");
  const counts = parent.tokenCounts;
  const perSample = counts?.perSample;
  const lengths = counts?.sampleTokens;
  if (
    !counts ||
    !perSample ||
    !lengths ||
    perSample.length !== parent.sampleCount ||
    lengths.length !== parent.sampleCount
  )
    throw new DomainError(
      "PRECONDITION_FAILED",
      `dataset "${parent.name}" has no per-sample supervised-token counts yet: tokenize it with the base model first`,
    );
  const rows = await allDatasetSamples(services.db, parent.id);
  const drawn = budget(
    rows.map((r) => ({
      taskId: r.sample.taskRowId,
      group: r.task.sourceGroup,
      tokens: perSample[r.sample.ordinal] ?? -1,
    })),
    input.tokens,
    input.seed,
  );
  const built: Built[] = drawn.sampleIndices.flatMap((i) => {
    const r = rows[i];
    return r ? [{ ...r.sample, line: sftLine({ messages: r.sample.messages }) }] : [];
  });
  const child = await writeSnapshot(
    services,
    {
      name: input.name ?? `${parent.name} (budget ${input.tokens} tokens, seed ${input.seed})`,
      splitId: parent.splitId,
      experimentId: parent.experimentId,
      sourceCollectionIds: parent.sourceCollectionIds,
      parentId: parent.id,
      createdBy: input.createdBy,
      promptHash: parent.promptHash,
      quality: parent.quality,
    },
    built,
  );
  // The child's counts are its samples' own, in its order (the snapshot orders samples anew);
  // its total and longest are untruncated lengths.
  const byHash = new Map(drawn.sampleIndices.map((i) => [rows[i]?.sample.hash, i]));
  const order = (await allDatasetSamples(services.db, child.id)).map((r) => byHash.get(r.sample.hash) ?? -1);
  const childLengths = order.map((i) => lengths[i] ?? 0);
  await setDatasetTokenCounts(services.db, child.id, {
    model: counts.model,
    supervisedTokens: drawn.tokens,
    totalTokens: childLengths.reduce((a, b) => a + b, 0),
    maxTokens: Math.max(0, ...childLengths),
    chatTemplateSha256: counts.chatTemplateSha256,
    perSample: order.map((i) => perSample[i] ?? 0),
    sampleTokens: childLengths,
  });
  const { sampleIndices: _indices, ...summary } = drawn;
  return { dataset: (await getDataset(services.db, child.id)) ?? child, budget: summary };
}
