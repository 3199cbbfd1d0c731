import type { Usage } from "./schemas";

// Cost of one call from the provider's usage fields and the user's price table (USD per 1M tokens).
export type Price = { inputPerMTok: number; outputPerMTok: number };

export function callCost(usage: Usage, price: Price | null | undefined): number {
  if (!price) return 0;
  return (usage.promptTokens * price.inputPerMTok + usage.completionTokens * price.outputPerMTok) / 1_000_000;
}

/** Whether spending has reached the cap; a cap of 0 allows nothing, an absent cap everything. */
export const budgetReached = (spentUsd: number, capUsd: number | null | undefined): boolean =>
  capUsd !== null && capUsd !== undefined && spentUsd >= capUsd - 1e-12;
