import { and, asc, desc, eq, inArray, isNull } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import type { Db } from "../client";
import {
  episodeBlobs,
  episodeBranches,
  episodeSnapshots,
  episodeStates,
  episodeSteps,
  episodes,
  episodeTrainingUses,
  jobs,
  splitAssignments,
  splits,
} from "../schema";

// Episodes as stored rows: one job's result written in one transaction (content-addressed rows
// shared across episodes, then the episodes, their steps and branch points), the readers of the
// CLI and the server, and the one way to use episodes for training (the trigger guards it too).

export type EpisodeRow = typeof episodes.$inferSelect;
export type NewEpisode = Omit<typeof episodes.$inferInsert, "id" | "createdAt" | "branchId" | "parentEpisodeId">;
export type NewStep = Omit<typeof episodeSteps.$inferInsert, "episodeId">;
export type NewBranchPoint = Omit<typeof episodeBranches.$inferInsert, "id" | "episodeId">;

export type EpisodeJobRows = {
  blobs: (typeof episodeBlobs.$inferInsert)[];
  snapshots: (typeof episodeSnapshots.$inferInsert)[];
  states: (typeof episodeStates.$inferInsert)[];
  main: { episode: NewEpisode; steps: NewStep[]; branchPoints: NewBranchPoint[] };
  /** Each continuation names its branch point by state hash. */
  continuations: { episode: NewEpisode; steps: NewStep[]; branchState: string }[];
};

const chunks = <T>(rows: T[], n = 500): T[][] =>
  Array.from({ length: Math.ceil(rows.length / n) }, (_, i) => rows.slice(i * n, (i + 1) * n));

/** Stores one episode job's result; a job already stored is left alone (returns its main episode's id). */
export async function insertEpisodeJob(db: Db, rows: EpisodeJobRows): Promise<{ id: string; created: boolean }> {
  return db.transaction(async (tx) => {
    const jobId = rows.main.episode.jobId;
    if (jobId) {
      const [known] = await tx
        .select({ id: episodes.id })
        .from(episodes)
        .where(and(eq(episodes.jobId, jobId), eq(episodes.ordinal, 0)));
      if (known) return { id: known.id, created: false };
    }
    for (const c of chunks(rows.blobs)) await tx.insert(episodeBlobs).values(c).onConflictDoNothing();
    for (const c of chunks(rows.snapshots)) await tx.insert(episodeSnapshots).values(c).onConflictDoNothing();
    for (const c of chunks(rows.states)) await tx.insert(episodeStates).values(c).onConflictDoNothing();
    const [main] = await tx.insert(episodes).values(rows.main.episode).returning({ id: episodes.id });
    if (!main) throw new DomainError("INTERNAL", "episode insert returned nothing");
    for (const c of chunks(rows.main.steps))
      await tx.insert(episodeSteps).values(c.map((s) => ({ ...s, episodeId: main.id })));
    const branchIds = new Map<string, string>();
    for (const b of rows.main.branchPoints) {
      const [row] = await tx
        .insert(episodeBranches)
        .values({ ...b, episodeId: main.id })
        .returning({ id: episodeBranches.id });
      if (row) branchIds.set(b.stateHash, row.id);
    }
    for (const c of rows.continuations) {
      const branchId = branchIds.get(c.branchState);
      if (!branchId) throw new DomainError("BAD_REQUEST", `continuation from ${c.branchState}: no such branch point`);
      const [ep] = await tx
        .insert(episodes)
        .values({ ...c.episode, parentEpisodeId: main.id, branchId })
        .returning({ id: episodes.id });
      if (!ep) throw new DomainError("INTERNAL", "episode insert returned nothing");
      for (const s of chunks(c.steps)) await tx.insert(episodeSteps).values(s.map((x) => ({ ...x, episodeId: ep.id })));
    }
    return { id: main.id, created: true };
  });
}

/** Succeeded episode jobs whose result is not stored yet. */
export async function unstoredEpisodeJobs(db: Db, limit = 100) {
  return db
    .select({ id: jobs.id, payload: jobs.payload, result: jobs.result })
    .from(jobs)
    .leftJoin(episodes, and(eq(episodes.jobId, jobs.id), eq(episodes.ordinal, 0)))
    .where(and(eq(jobs.type, "episode"), eq(jobs.state, "succeeded"), isNull(episodes.id)))
    .orderBy(asc(jobs.finishedAt))
    .limit(limit);
}

/** Episodes, newest first; `splitId` keeps those on the split's tasks (an experiment's or a collection's). */
export async function listEpisodes(
  db: Db,
  opts: { taskRowId?: string; splitId?: string; mainOnly?: boolean; limit?: number } = {},
) {
  return db
    .select()
    .from(episodes)
    .where(
      and(
        opts.taskRowId ? eq(episodes.taskRowId, opts.taskRowId) : undefined,
        opts.splitId
          ? inArray(
              episodes.taskRowId,
              db
                .select({ id: splitAssignments.taskRowId })
                .from(splitAssignments)
                .where(eq(splitAssignments.splitId, opts.splitId)),
            )
          : undefined,
        opts.mainOnly ? isNull(episodes.parentEpisodeId) : undefined,
      ),
    )
    .orderBy(desc(episodes.createdAt), asc(episodes.ordinal))
    .limit(opts.limit ?? 100);
}

/** One episode with its steps, its branch points (a main episode's) and its continuations. */
export async function getEpisode(db: Db, id: string) {
  const [episode] = await db.select().from(episodes).where(eq(episodes.id, id));
  if (!episode) return null;
  const steps = await db
    .select()
    .from(episodeSteps)
    .where(eq(episodeSteps.episodeId, id))
    .orderBy(asc(episodeSteps.index));
  const branches = await db.select().from(episodeBranches).where(eq(episodeBranches.episodeId, id));
  const continuations = await db
    .select()
    .from(episodes)
    .where(eq(episodes.parentEpisodeId, id))
    .orderBy(asc(episodes.ordinal));
  return { episode, steps, branches, continuations };
}

export async function getEpisodeBlobs(db: Db, hashes: string[]) {
  if (hashes.length === 0) return [];
  return db.select().from(episodeBlobs).where(inArray(episodeBlobs.sha256, hashes));
}

export async function getEpisodeSnapshot(db: Db, treeHash: string) {
  const [row] = await db.select().from(episodeSnapshots).where(eq(episodeSnapshots.treeHash, treeHash));
  return row ?? null;
}

export async function getEpisodeState(db: Db, hash: string) {
  const [row] = await db.select().from(episodeStates).where(eq(episodeStates.hash, hash));
  return row ?? null;
}

/**
 * Records that `purpose` trains on these episodes. Refused, naming the first offender, unless the
 * split is frozen and every episode's task is in its train part; the table's trigger refuses the
 * same for any other writer.
 */
export async function useEpisodesForTraining(db: Db, opts: { splitId: string; episodeIds: string[]; purpose: string }) {
  return db.transaction(async (tx) => {
    const [split] = await tx.select({ frozen: splits.frozen }).from(splits).where(eq(splits.id, opts.splitId));
    if (!split) throw new DomainError("NOT_FOUND", `split ${opts.splitId} not found`);
    if (!split.frozen) throw new DomainError("BAD_REQUEST", `split ${opts.splitId} is not frozen: no training on it`);
    const rows = await tx
      .select({ id: episodes.id, taskKey: episodes.taskKey, part: splitAssignments.part })
      .from(episodes)
      .leftJoin(
        splitAssignments,
        and(eq(splitAssignments.taskRowId, episodes.taskRowId), eq(splitAssignments.splitId, opts.splitId)),
      )
      .where(inArray(episodes.id, opts.episodeIds));
    const found = new Map(rows.map((r) => [r.id, r]));
    for (const id of opts.episodeIds) {
      const r = found.get(id);
      if (!r) throw new DomainError("NOT_FOUND", `episode ${id} not found`);
      if (r.part !== "train")
        throw new DomainError(
          "BAD_REQUEST",
          `episode ${id} (task ${r.taskKey}) is ${r.part ? `${r.part} in the split` : "not in the split"}: episodes for training come from train tasks only`,
        );
    }
    for (const c of chunks(opts.episodeIds))
      await tx
        .insert(episodeTrainingUses)
        .values(c.map((episodeId) => ({ episodeId, splitId: opts.splitId, purpose: opts.purpose })))
        .onConflictDoNothing();
    return opts.episodeIds.length;
  });
}
