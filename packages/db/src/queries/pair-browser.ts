import { and, asc, count, countDistinct, eq, type SQL } from "drizzle-orm";
import type { ChosenSource, FailingLayer, PairSource, RejectedSource } from "@agentlab/core";
import type { Db } from "../client";
import { preferencePairs } from "../schema";
import type { PreferencePairRow } from "./preference-pairs";

// What the pair browser reads: one page of an experiment's stored preference pairs
// under the page's filters with the filtered total, and the figures its header draws (pairs per
// round, failing layer, pair source and either side's source; the margins before training of the filtered pairs).

export type PairFilter = {
  experimentId: string;
  round?: number;
  failingLayer?: FailingLayer;
  chosenSource?: ChosenSource;
  rejectedSource?: RejectedSource;
  pairSource?: PairSource;
};

function where(f: PairFilter): SQL | undefined {
  const conds = [eq(preferencePairs.experimentId, f.experimentId)];
  if (f.round !== undefined) conds.push(eq(preferencePairs.round, f.round));
  if (f.failingLayer) conds.push(eq(preferencePairs.failingLayer, f.failingLayer));
  if (f.chosenSource) conds.push(eq(preferencePairs.chosenSource, f.chosenSource));
  if (f.rejectedSource) conds.push(eq(preferencePairs.rejectedSource, f.rejectedSource));
  if (f.pairSource) conds.push(eq(preferencePairs.pairSource, f.pairSource));
  return and(...conds);
}

/** A page of pairs in the stored order (round, task, pair key), how many match in all and of how many tasks. */
export async function browsePreferencePairs(
  db: Db,
  f: PairFilter & { limit: number; offset: number },
): Promise<{ total: number; tasks: number; rows: PreferencePairRow[] }> {
  const [rows, [n]] = await Promise.all([
    db
      .select()
      .from(preferencePairs)
      .where(where(f))
      .orderBy(asc(preferencePairs.round), asc(preferencePairs.taskKey), asc(preferencePairs.pairKey))
      .limit(f.limit)
      .offset(f.offset),
    db
      .select({ n: count(), tasks: countDistinct(preferencePairs.taskKey) })
      .from(preferencePairs)
      .where(where(f)),
  ]);
  return { total: n?.n ?? 0, tasks: n?.tasks ?? 0, rows };
}

export type PairGroupCount = {
  round: number;
  failingLayer: FailingLayer;
  chosenSource: ChosenSource;
  rejectedSource: RejectedSource;
  pairSource: PairSource;
  pairs: number;
};

/**
 * Pairs per (round, failing layer, chosen source, rejected source, pair source) over the whole experiment (the
 * filter buttons' counts), and the margin and weight of every pair under the filter (the histogram).
 */
export async function preferencePairFigures(
  db: Db,
  f: PairFilter,
): Promise<{ groups: PairGroupCount[]; margins: { margin: number; weight: number }[] }> {
  const [groups, margins] = await Promise.all([
    db
      .select({
        round: preferencePairs.round,
        failingLayer: preferencePairs.failingLayer,
        chosenSource: preferencePairs.chosenSource,
        rejectedSource: preferencePairs.rejectedSource,
        pairSource: preferencePairs.pairSource,
        pairs: count(),
      })
      .from(preferencePairs)
      .where(eq(preferencePairs.experimentId, f.experimentId))
      .groupBy(
        preferencePairs.round,
        preferencePairs.failingLayer,
        preferencePairs.chosenSource,
        preferencePairs.rejectedSource,
        preferencePairs.pairSource,
      )
      .orderBy(
        asc(preferencePairs.round),
        asc(preferencePairs.failingLayer),
        asc(preferencePairs.chosenSource),
        asc(preferencePairs.rejectedSource),
        asc(preferencePairs.pairSource),
      ),
    db
      .select({ margin: preferencePairs.marginBefore, weight: preferencePairs.weight })
      .from(preferencePairs)
      .where(where(f))
      .orderBy(asc(preferencePairs.marginBefore)),
  ]);
  return { groups, margins };
}
