import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { DomainError, poolSnapshotHash, type TaskSpec } from "@agentlab/core";
import { queryRows, type Db, type Tx } from "../client";
import { groupMergeProposals, taskPools, tasks } from "../schema";
import { auditStateIs, latestAuditStatus, type TaskAuditState } from "./audits";

export type TaskRow = typeof tasks.$inferSelect;
export type Pool = typeof taskPools.$inferSelect;

/** Recomputes a pool's counts and snapshot hash from its rows; returns the hash. */
export async function refreshPoolStats(db: Db, poolId: string): Promise<string> {
  const rows = await db
    .select({ taskId: tasks.taskId, group: tasks.groupKey, fingerprint: tasks.fingerprint })
    .from(tasks)
    .where(eq(tasks.poolId, poolId));
  const snapshotHash = poolSnapshotHash(rows);
  const groupCount = new Set(rows.map((r) => r.group)).size;
  await db
    .update(taskPools)
    .set({ snapshotHash, taskCount: rows.length, groupCount, updatedAt: sql`now()` })
    .where(eq(taskPools.id, poolId));
  return snapshotHash;
}

export type PoolSummary = Pool & {
  origins: { origin: string; tasks: number }[];
  exactDuplicateTasks: number;
  pendingMerges: number;
  splits: number;
};

/** `hideArchived`: what lists and pickers show by default (archived pools stay reachable by id and name). */
export async function listPools(db: Db, opts: { hideArchived?: boolean } = {}): Promise<PoolSummary[]> {
  const pools = await db
    .select()
    .from(taskPools)
    .where(opts.hideArchived ? isNull(taskPools.archivedAt) : undefined)
    .orderBy(desc(taskPools.builtin), asc(taskPools.name));
  return Promise.all(pools.map((p) => withSummary(db, p)));
}

export async function getPool(db: Db, ref: { id?: string; name?: string }): Promise<PoolSummary | undefined> {
  const where = ref.id ? eq(taskPools.id, ref.id) : ref.name ? eq(taskPools.name, ref.name) : undefined;
  if (!where) return undefined;
  const [pool] = await db.select().from(taskPools).where(where);
  return pool ? withSummary(db, pool) : undefined;
}

async function withSummary(db: Db, pool: Pool): Promise<PoolSummary> {
  const [origins, [stats]] = await Promise.all([
    db
      .select({ origin: tasks.origin, tasks: sql<number>`count(*)::int` })
      .from(tasks)
      .where(eq(tasks.poolId, pool.id))
      .groupBy(tasks.origin)
      .orderBy(desc(sql`count(*)`)),
    queryRows<{ dups: number; merges: number; splits: number }>(
      db,
      sql`select
      (select count(*)::int from tasks t where t.pool_id = ${pool.id} and exists (select 1 from tasks o where o.pool_id = t.pool_id and o.fingerprint = t.fingerprint and o.id <> t.id)) as dups,
      (select count(*)::int from group_merge_proposals where pool_id = ${pool.id} and status = 'pending') as merges,
      (select count(*)::int from splits where pool_id = ${pool.id}) as splits`,
    ),
  ]);
  return {
    ...pool,
    origins,
    exactDuplicateTasks: stats?.dups ?? 0,
    pendingMerges: stats?.merges ?? 0,
    splits: stats?.splits ?? 0,
  };
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Keyset page of a pool's tasks in bytewise id order; `q` is a prefix of the id or the source group. */
export async function listTasks(
  db: Db,
  opts: { poolId: string; q?: string; audit?: TaskAuditState; after?: string; limit: number },
) {
  const conds: SQL[] = [sql`${tasks.poolId} = ${opts.poolId}`];
  if (opts.after !== undefined) conds.push(sql`${tasks.taskId} collate "C" > ${opts.after}`);
  if (opts.q) {
    const pat = `${escapeLike(opts.q)}%`;
    conds.push(sql`(${tasks.taskId} collate "C" like ${pat} or ${tasks.groupKey} collate "C" like ${pat})`);
  }
  if (opts.audit) conds.push(auditStateIs(opts.audit));
  const rows = await db
    .select({
      id: tasks.id,
      taskId: tasks.taskId,
      sourceGroup: tasks.sourceGroup,
      groupKey: tasks.groupKey,
      origin: tasks.origin,
      fingerprint: tasks.fingerprint,
      sizeBytes: tasks.sizeBytes,
      instruction: sql<string>`left(${tasks.instruction}, 160)`,
      audit: latestAuditStatus,
    })
    .from(tasks)
    .where(and(...conds))
    .orderBy(sql`${tasks.taskId} collate "C"`)
    .limit(opts.limit + 1);
  const items = rows.slice(0, opts.limit);
  return { items, nextCursor: rows.length > opts.limit ? (items[items.length - 1]?.taskId ?? null) : null };
}

export async function getTask(db: Db, id: string): Promise<TaskRow | undefined> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, id));
  return row;
}

/** Other tasks of the pool sharing the fingerprint or the normalized code hash of a task. */
export async function taskDuplicates(db: Db, row: Pick<TaskRow, "id" | "poolId" | "fingerprint" | "normalizedHash">) {
  return db
    .select({
      id: tasks.id,
      taskId: tasks.taskId,
      groupKey: tasks.groupKey,
      exact: sql<boolean>`${tasks.fingerprint} = ${row.fingerprint}`,
    })
    .from(tasks)
    .where(
      and(
        eq(tasks.poolId, row.poolId),
        sql`${tasks.id} <> ${row.id}`,
        sql`(${tasks.fingerprint} = ${row.fingerprint} or ${tasks.normalizedHash} = ${row.normalizedHash})`,
      ),
    )
    .limit(100);
}

export const toTaskSpec = (
  r: Pick<
    TaskRow,
    | "taskId"
    | "sourceGroup"
    | "language"
    | "instruction"
    | "files"
    | "publicTests"
    | "hiddenTests"
    | "reference"
    | "metadata"
  > & { cluster?: string | null },
): TaskSpec => ({
  id: r.taskId,
  source_group: r.sourceGroup,
  language: r.language as TaskSpec["language"],
  instruction: r.instruction,
  files: r.files,
  public_tests: r.publicTests,
  hidden_tests: r.hiddenTests,
  reference: r.reference,
  metadata: r.metadata,
  ...(r.cluster ? { cluster: r.cluster } : {}),
});

/** One page of a pool's merge proposals, most similar first, and how many there are in all. */
export async function listMergeProposals(
  db: Db,
  opts: { poolId: string; status?: "pending" | "accepted" | "rejected"; offset?: number; limit?: number },
) {
  const conds = [eq(groupMergeProposals.poolId, opts.poolId)];
  if (opts.status) conds.push(eq(groupMergeProposals.status, opts.status));
  const [rows, [count]] = await Promise.all([
    db
      .select()
      .from(groupMergeProposals)
      .where(and(...conds))
      .orderBy(desc(groupMergeProposals.similarity), asc(groupMergeProposals.groupA), asc(groupMergeProposals.id))
      .offset(opts.offset ?? 0)
      .limit(opts.limit ?? 50),
    db
      .select({ total: sql<number>`count(*)::int` })
      .from(groupMergeProposals)
      .where(and(...conds)),
  ]);
  return { rows, total: count?.total ?? 0 };
}

/** Accepting folds one group into the other for every task (and future imports); rejecting only records it. */
export async function decideMerge(db: Db, opts: { id: string; accept: boolean; userId?: string | null }) {
  return db.transaction((tx) => decideOne(tx, opts));
}

/**
 * Several decisions at once (the page's bulk Merge / Reject), all or none: a proposal decided
 * meanwhile refuses the whole batch, naming it, so the page can reload and ask again.
 */
export async function decideMerges(db: Db, opts: { ids: string[]; accept: boolean; userId?: string | null }) {
  return db.transaction(async (tx) => {
    const out = [];
    for (const id of opts.ids) out.push({ id, ...(await decideOne(tx, { ...opts, id })) });
    return out;
  });
}

async function decideOne(tx: Tx, opts: { id: string; accept: boolean; userId?: string | null }) {
  const [p] = await tx.select().from(groupMergeProposals).where(eq(groupMergeProposals.id, opts.id)).for("update");
  if (!p) throw new DomainError("NOT_FOUND", `no such merge proposal ${opts.id}`);
  if (p.status !== "pending")
    throw new DomainError("CONFLICT", `proposal ${p.groupA} ⇐ ${p.groupB} already ${p.status}`);
  await tx.select({ id: taskPools.id }).from(taskPools).where(eq(taskPools.id, p.poolId)).for("update");
  await tx
    .update(groupMergeProposals)
    .set({ status: opts.accept ? "accepted" : "rejected", decidedBy: opts.userId ?? null, decidedAt: sql`now()` })
    .where(eq(groupMergeProposals.id, p.id));
  if (!opts.accept) return { status: "rejected" as const, moved: 0 };
  // Groups may have been merged already; fold the current effective groups of the two tasks.
  const keys = await tx
    .select({ taskId: tasks.taskId, groupKey: tasks.groupKey })
    .from(tasks)
    .where(and(eq(tasks.poolId, p.poolId), inArray(tasks.taskId, [p.taskA, p.taskB])));
  const into = keys.find((k) => k.taskId === p.taskA)?.groupKey ?? p.groupA;
  const from = keys.find((k) => k.taskId === p.taskB)?.groupKey ?? p.groupB;
  const moved =
    into === from
      ? []
      : await tx
          .update(tasks)
          .set({ groupKey: into })
          .where(and(eq(tasks.poolId, p.poolId), eq(tasks.groupKey, from)))
          .returning({ id: tasks.id });
  await refreshPoolStats(tx, p.poolId);
  return { status: "accepted" as const, moved: moved.length, group: into };
}
