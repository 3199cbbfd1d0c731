import { and, asc, eq, inArray } from "drizzle-orm";
import { DomainError, sha256Hex } from "@agentlab/core";
import type { Db } from "../client";
import { episodeBlobs, episodeSnapshots, episodeStates, episodes, splitAssignments, tasks } from "../schema";

// Episodes read as trajectories for training data: the candidates of a trajectory dataset with
// their task and its part in the split, and a workspace tree's files with each content checked
// against its address.

/**
 * Episodes for trajectory SFT: the named ones (whatever their verdict or task, so that a caller can
 * refuse them by name), or every passing episode on the split's train tasks (episodes on dev and
 * test tasks are the agentic evaluation's); each with its task row and the task's part in the
 * split (null: not in it).
 */
export async function trajectoryEpisodes(
  db: Db,
  opts: { splitId: string; episodeIds?: string[]; policyName?: string },
) {
  if (opts.episodeIds?.length === 0) return [];
  return db
    .select({ episode: episodes, task: tasks, part: splitAssignments.part })
    .from(episodes)
    .innerJoin(tasks, eq(tasks.id, episodes.taskRowId))
    .leftJoin(
      splitAssignments,
      and(eq(splitAssignments.taskRowId, episodes.taskRowId), eq(splitAssignments.splitId, opts.splitId)),
    )
    .where(
      and(
        opts.episodeIds
          ? inArray(episodes.id, opts.episodeIds)
          : and(eq(splitAssignments.part, "train"), eq(episodes.verdict, "pass")),
        opts.policyName ? eq(episodes.policyName, opts.policyName) : undefined,
      ),
    )
    .orderBy(asc(episodes.createdAt), asc(episodes.ordinal));
}

/** The files of a stored workspace tree, each content checked against its sha256. */
export async function snapshotFiles(db: Db, treeHash: string): Promise<{ path: string; content: string }[]> {
  const [snapshot] = await db.select().from(episodeSnapshots).where(eq(episodeSnapshots.treeHash, treeHash));
  if (!snapshot) throw new DomainError("NOT_FOUND", `snapshot ${treeHash} not found`);
  const hashes = snapshot.manifest.files.map((f) => f.sha256);
  const blobs = new Map(
    (hashes.length ? await db.select().from(episodeBlobs).where(inArray(episodeBlobs.sha256, hashes)) : []).map((b) => [
      b.sha256,
      b.content,
    ]),
  );
  return snapshot.manifest.files.map((f) => {
    const content = blobs.get(f.sha256);
    if (content === undefined || sha256Hex(content) !== f.sha256)
      throw new DomainError("INTERNAL", `snapshot ${treeHash}: the content of ${f.path} is missing or corrupt`);
    return { path: f.path, content };
  });
}

/** The files of an episode's final workspace: what it submitted, with the public tests still in it. */
export async function episodeFinalFiles(db: Db, episodeId: string) {
  const [row] = await db
    .select({ treeHash: episodeStates.treeHash })
    .from(episodes)
    .innerJoin(episodeStates, eq(episodeStates.hash, episodes.finalStateHash))
    .where(eq(episodes.id, episodeId));
  if (!row) throw new DomainError("NOT_FOUND", `episode ${episodeId} not found`);
  return snapshotFiles(db, row.treeHash);
}
