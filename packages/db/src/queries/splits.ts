import { and, asc, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import {
  DomainError,
  computeSplit,
  exactContentHash,
  leakageReport,
  normalizedContentHash,
  poolSnapshotHash,
  taskTokens,
  type LeakageOptions,
  type SplitAdmission,
  type SplitParams,
  type SplitPart,
  type TaskSpec,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { splitAssignments, splits, taskPools, tasks } from "../schema";
import { toTaskSpec } from "./tasks";
import { latestAuditStatus } from "./audits";

export type Split = typeof splits.$inferSelect;

export type CreateSplitInput = SplitParams & {
  poolId: string;
  name?: string;
  createdBy?: string | null;
  leakage?: LeakageOptions;
  /** The admission-gate override: keep tasks whose newest audit failed (recorded on the split). */
  includeFailedAudits?: boolean;
};

/**
 * Computes the split from the pool as it is now, with its leakage report, and writes it frozen in
 * one transaction. The same pool snapshot and parameters give the same manifest: asking twice
 * returns the existing split instead of a copy.
 */
export async function createSplit(db: Db, input: CreateSplitInput): Promise<{ split: Split; created: boolean }> {
  return db.transaction(async (tx) => {
    // A share lock keeps imports and merges out while the snapshot is read.
    const [pool] = await tx.select().from(taskPools).where(eq(taskPools.id, input.poolId)).for("share");
    if (!pool) throw new DomainError("NOT_FOUND", "no such pool");
    const all = await tx
      .select({
        id: tasks.id,
        taskId: tasks.taskId,
        group: tasks.groupKey,
        fingerprint: tasks.fingerprint,
        instruction: tasks.instruction,
        files: tasks.files,
        audit: latestAuditStatus,
      })
      .from(tasks)
      .where(eq(tasks.poolId, pool.id));
    const snapshotHash = poolSnapshotHash(all);
    // The admission gate: a task whose newest admission audit failed (its reference does not pass,
    // its tests miss bugs) does not enter the split, unless the override asks for it explicitly.
    const failed = all.filter((r) => r.audit === "failed");
    const includeFailed = input.includeFailedAudits ?? false;
    const rows = includeFailed ? all : all.filter((r) => r.audit !== "failed");
    if (rows.length === 0)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `every task of this pool failed its admission audit (${failed.length}); nothing to split`,
      );
    const admission: SplitAdmission = {
      includeFailedAudits: includeFailed,
      excludedTaskIds: includeFailed ? [] : failed.map((r) => r.taskId).sort(),
      failedAuditsIncluded: includeFailed ? failed.length : 0,
      overrideBy: includeFailed ? (input.createdBy ?? null) : null,
    };
    const computed = computeSplit(rows, { ...input, snapshotHash });
    const [existing] = await tx
      .select()
      .from(splits)
      .where(and(eq(splits.poolId, pool.id), eq(splits.manifestHash, computed.manifestHash)));
    if (existing) return { split: existing, created: false };

    const byId = new Map(rows.map((r) => [r.taskId, r]));
    const leak = leakageReport(
      computed.assignments.map((a) => {
        const r = byId.get(a.taskId) ?? { instruction: "", files: [] };
        return {
          taskId: a.taskId,
          part: a.part,
          tokens: taskTokens(r),
          exactHash: exactContentHash(r),
          normalizedHash: normalizedContentHash(r),
        };
      }),
      input.leakage,
    );
    const name = input.name ?? `${pool.name} seed=${input.seed} dev=${input.devRatio} test=${input.testRatio}`;
    const [split] = await tx
      .insert(splits)
      .values({
        poolId: pool.id,
        name,
        seed: input.seed,
        devRatio: input.devRatio,
        testRatio: input.testRatio,
        poolSnapshotHash: snapshotHash,
        manifestHash: computed.manifestHash,
        counts: computed.counts,
        leakage: leak,
        admission,
        createdBy: input.createdBy ?? null,
      })
      .returning();
    if (!split) throw new DomainError("INTERNAL", "split insert returned nothing");
    for (let i = 0; i < computed.assignments.length; i += 5000) {
      const rows = computed.assignments.slice(i, i + 5000).map((a) => ({
        split_id: split.id,
        task_row_id: byId.get(a.taskId)?.id,
        task_id: a.taskId,
        group_key: a.group,
        part: a.part,
      }));
      await tx.execute(sql`insert into split_assignments (split_id, task_row_id, task_id, group_key, part)
        select split_id, task_row_id, task_id, group_key, part from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as x(split_id uuid, task_row_id uuid, task_id text, group_key text, part split_part)`);
    }
    // From here the triggers refuse any change to the split or its assignments.
    const [frozen] = await tx.update(splits).set({ frozen: true }).where(eq(splits.id, split.id)).returning();
    return { split: frozen ?? split, created: true };
  });
}

export async function listSplits(db: Db, opts: { poolId?: string; hideArchived?: boolean } = {}) {
  return db
    .select({
      id: splits.id,
      poolId: splits.poolId,
      poolName: taskPools.name,
      name: splits.name,
      seed: splits.seed,
      devRatio: splits.devRatio,
      testRatio: splits.testRatio,
      manifestHash: splits.manifestHash,
      counts: splits.counts,
      frozen: splits.frozen,
      createdAt: splits.createdAt,
      archivedAt: splits.archivedAt,
      testTasksWithLeak: sql<number>`(${splits.leakage} ->> 'testTasksWithLeak')::int`,
    })
    .from(splits)
    .innerJoin(taskPools, eq(taskPools.id, splits.poolId))
    .where(
      and(
        opts.poolId ? eq(splits.poolId, opts.poolId) : undefined,
        opts.hideArchived ? isNull(splits.archivedAt) : undefined,
      ),
    )
    .orderBy(desc(splits.createdAt))
    .limit(500);
}

export async function getSplit(db: Db, id: string) {
  const [row] = await db
    .select({ split: splits, poolName: taskPools.name })
    .from(splits)
    .innerJoin(taskPools, eq(taskPools.id, splits.poolId))
    .where(eq(splits.id, id));
  return row ? { ...row.split, poolName: row.poolName } : undefined;
}

/** Keyset page of a split's source groups with their part and size. */
export async function listSplitGroups(
  db: Db,
  opts: { splitId: string; part?: SplitPart; after?: string; limit: number },
) {
  const conds: SQL[] = [sql`split_id = ${opts.splitId}`];
  if (opts.part) conds.push(sql`part = ${opts.part}`);
  if (opts.after !== undefined) conds.push(sql`group_key collate "C" > ${opts.after}`);
  const rows = await queryRows<{ group: string; part: SplitPart; size: number }>(
    db,
    sql`select group_key as "group", min(part::text) as part, count(*)::int as size from split_assignments
        where ${sql.join(conds, sql` and `)} group by group_key order by group_key collate "C" limit ${opts.limit + 1}`,
  );
  const items = rows.slice(0, opts.limit);
  return { items, nextCursor: rows.length > opts.limit ? (items[items.length - 1]?.group ?? null) : null };
}

/** Groups whose tasks landed in more than one part: always empty for a split made here; audits check it. */
export async function splitGroupsSpanningParts(db: Db, splitId: string): Promise<string[]> {
  const rows = await queryRows<{ g: string }>(
    db,
    sql`select group_key as g from split_assignments where split_id = ${splitId} group by group_key having count(distinct part) > 1`,
  );
  return rows.map((r) => r.g);
}

/** Keyset page of full Task spec v1 records of a pool, or of one part of one of its splits. */
export async function exportTaskPage(
  db: Db,
  opts: { poolId: string; splitId?: string; part?: SplitPart; after?: string; limit: number },
): Promise<{ items: TaskSpec[]; nextCursor: string | null }> {
  const conds: SQL[] = [eq(tasks.poolId, opts.poolId)];
  if (opts.after !== undefined) conds.push(sql`${tasks.taskId} collate "C" > ${opts.after}`);
  const base = db.select({ t: tasks }).from(tasks);
  const joined = opts.splitId
    ? base.innerJoin(
        splitAssignments,
        and(
          eq(splitAssignments.taskRowId, tasks.id),
          eq(splitAssignments.splitId, opts.splitId),
          opts.part ? eq(splitAssignments.part, opts.part) : undefined,
        ),
      )
    : base;
  const rows = await joined
    .where(and(...conds))
    .orderBy(sql`${tasks.taskId} collate "C"`, asc(tasks.id))
    .limit(opts.limit + 1);
  const items = rows.slice(0, opts.limit).map((r) => toTaskSpec(r.t));
  return { items, nextCursor: rows.length > opts.limit ? (items[items.length - 1]?.id ?? null) : null };
}
