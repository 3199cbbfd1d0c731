import { and, asc, eq, sql } from "drizzle-orm";
import type { PairSource, ScoredPair } from "@agentlab/core";
import type { Db } from "../client";
import { preferencePairs, tasks } from "../schema";
import { experimentTaskRows } from "./experiment-task-rows";

// Preference pairs of an experiment's DPO rounds. One round's pairs are written in one
// transaction, all or none; the database refuses a pair of a dev or test task (trigger).

export type PreferencePairRow = typeof preferencePairs.$inferSelect;

/** Idempotent per (experiment, round, pair key): a re-run of the pairs step keeps the stored rows. */
export async function insertPreferencePairs(
  db: Db,
  opts: { experimentId: string; round: number; pairs: readonly ScoredPair[] },
): Promise<number> {
  return db.transaction(async (tx) => {
    const { splitId, rowOf } = await experimentTaskRows(
      tx,
      opts.experimentId,
      opts.pairs.map((p) => p.taskId),
      "pairs",
    );
    let written = 0;
    for (let i = 0; i < opts.pairs.length; i += 200) {
      const chunk = opts.pairs.slice(i, i + 200).map((p) => ({
        experimentId: opts.experimentId,
        round: opts.round,
        pairKey: p.pairKey,
        splitId,
        taskRowId: rowOf.get(p.taskId) ?? "",
        taskKey: p.taskId,
        pairSource: p.pairSource,
        prompt: p.prompt,
        chosenSource: p.chosenSource,
        chosenText: p.chosenText,
        rejectedSource: p.rejectedSource,
        rejectedModelKey: p.rejectedModelKey,
        rejectedSample: p.rejectedSample,
        rejectedText: p.rejectedText,
        rejectedVerdict: p.rejectedVerdict,
        failingLayer: p.failingLayer,
        failingTests: p.failingTests,
        marginBefore: p.marginBefore,
        weight: p.weight,
        stateHash: p.stateHash ?? null,
        chosenEpisodeId: p.chosenEpisodeId ?? null,
        rejectedEpisodeId: p.rejectedEpisodeId ?? null,
      }));
      const out = await tx
        .insert(preferencePairs)
        .values(chunk)
        .onConflictDoNothing()
        .returning({ id: preferencePairs.id });
      written += out.length;
    }
    return written;
  });
}

export async function listPreferencePairs(
  db: Db,
  opts: { experimentId: string; round?: number; pairSource?: PairSource; limit?: number; offset?: number },
): Promise<PreferencePairRow[]> {
  const conds = [eq(preferencePairs.experimentId, opts.experimentId)];
  if (opts.round !== undefined) conds.push(eq(preferencePairs.round, opts.round));
  if (opts.pairSource) conds.push(eq(preferencePairs.pairSource, opts.pairSource));
  return db
    .select()
    .from(preferencePairs)
    .where(and(...conds))
    .orderBy(asc(preferencePairs.round), asc(preferencePairs.taskKey), asc(preferencePairs.pairKey))
    .limit(opts.limit ?? 10_000)
    .offset(opts.offset ?? 0);
}

/** Pairs per round and failing layer: the browser's and the report's summary. */
export async function preferencePairCounts(
  db: Db,
  experimentId: string,
): Promise<Array<{ round: number; failingLayer: string; pairs: number }>> {
  return db
    .select({
      round: preferencePairs.round,
      failingLayer: preferencePairs.failingLayer,
      pairs: sql<number>`count(*)::int`,
    })
    .from(preferencePairs)
    .where(eq(preferencePairs.experimentId, experimentId))
    .groupBy(preferencePairs.round, preferencePairs.failingLayer)
    .orderBy(asc(preferencePairs.round), asc(preferencePairs.failingLayer));
}

/** Every DPO pair's chosen and rejected text with its task's main file paths: what answer-side contamination compares. */
export async function trainedDpoAnswers(db: Db, experimentId: string) {
  const rows = await db
    .select({
      pairKey: preferencePairs.pairKey,
      round: preferencePairs.round,
      chosen: preferencePairs.chosenText,
      rejected: preferencePairs.rejectedText,
      files: tasks.files,
    })
    .from(preferencePairs)
    .innerJoin(tasks, eq(tasks.id, preferencePairs.taskRowId))
    .where(eq(preferencePairs.experimentId, experimentId))
    .orderBy(asc(preferencePairs.round), asc(preferencePairs.pairKey));
  return rows.map((r) => ({ ...r, mains: r.files.filter((f) => f.role === "main").map((f) => f.path) }));
}
