import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import {
  DomainError,
  minhashSignature,
  normalizedCodeHash,
  poolSnapshotHash,
  proposeGroupMerges,
  taskFingerprint,
  taskTokens,
  validateTaskStream,
  type TaskLimits,
  type TaskProblem,
  type TaskSpec,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { groupMergeProposals, taskPools, tasks } from "../schema";
import { auditStateIs, latestAuditStatus, type TaskAuditState } from "./audits";

export type TaskRow = typeof tasks.$inferSelect;
export type Pool = typeof taskPools.$inferSelect;

export type ImportPoolInput = {
  name: string;
  /** The file's bytes, in chunks (.jsonl or .jsonl.gz; gzip is detected by its magic bytes). */
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  description?: string;
  builtin?: boolean;
  createdBy?: string | null;
  limits?: Partial<TaskLimits>;
  /** Near-duplicate threshold (estimated Jaccard) for proposing group merges. */
  mergeThreshold?: number;
};

export type ImportResult =
  | {
      ok: true;
      poolId: string;
      imported: number;
      exactDuplicates: number;
      normalizedDuplicates: number;
      /** Tasks of this import whose fingerprint a task already in the pool had: the re-upload warning. */
      duplicatesOfExisting: number;
      mergeProposals: number;
      snapshotHash: string;
    }
  | { ok: false; problems: TaskProblem[] };

// Raised inside the import transaction so that it rolls back; turned into `{ ok: false }` outside.
class ImportRejected extends Error {
  constructor(readonly problems: TaskProblem[]) {
    super("import rejected");
  }
}

const BATCH = 1000;

/**
 * All-or-nothing import of a Task spec v1 file into a pool (created when missing): the whole file
 * is validated first, then written in one transaction; any problem (including an id already in
 * the pool) leaves the database untouched. Used by the upload endpoint, the CLI and the bootstrap.
 */
export async function importPool(db: Db, input: ImportPoolInput): Promise<ImportResult> {
  const { tasks: valid, problems } = await validateTaskStream(input.lines, { limits: input.limits });
  if (problems.length > 0) return { ok: false, problems };
  const prepared = valid.map(({ line, task, bytes }) => ({
    line,
    task,
    bytes,
    fingerprint: taskFingerprint(task),
    normalizedHash: normalizedCodeHash(task),
    minhash: minhashSignature(taskTokens(task)),
  }));
  try {
    const result = await db.transaction(async (tx) => {
      await tx
        .insert(taskPools)
        .values({
          name: input.name,
          description: input.description ?? "",
          builtin: input.builtin ?? false,
          snapshotHash: "",
          createdBy: input.createdBy ?? null,
        })
        .onConflictDoNothing();
      // The row lock serializes concurrent imports into one pool (ids and stats stay consistent).
      const [pool] = await tx.select().from(taskPools).where(eq(taskPools.name, input.name)).for("update");
      if (!pool) throw new DomainError("INTERNAL", "pool vanished during import");
      const ids = prepared.map((p) => p.task.id);
      const clashes = new Set<string>();
      for (let i = 0; i < ids.length; i += 5000) {
        const rows = await tx
          .select({ taskId: tasks.taskId })
          .from(tasks)
          .where(and(eq(tasks.poolId, pool.id), inArray(tasks.taskId, ids.slice(i, i + 5000))));
        for (const r of rows) clashes.add(r.taskId);
      }
      if (clashes.size > 0) {
        throw new ImportRejected(
          prepared
            .filter((p) => clashes.has(p.task.id))
            .map((p) => ({
              line: p.line,
              field: "id",
              code: "duplicate_id" as const,
              message: `duplicate id "${p.task.id}" (already in pool "${input.name}")`,
              taskId: p.task.id,
            })),
        );
      }
      // A group merged earlier keeps absorbing its new variants.
      const groups = [...new Set(prepared.map((p) => p.task.source_group))];
      const merged = new Map<string, string>();
      const known = await tx
        .selectDistinct({ sourceGroup: tasks.sourceGroup, groupKey: tasks.groupKey })
        .from(tasks)
        .where(and(eq(tasks.poolId, pool.id), inArray(tasks.sourceGroup, groups)));
      for (const k of known) merged.set(k.sourceGroup, k.groupKey);
      const importId = crypto.randomUUID();
      for (let i = 0; i < prepared.length; i += BATCH) {
        await insertTaskRows(
          tx,
          prepared.slice(i, i + BATCH).map((p) => ({
            pool_id: pool.id,
            task_id: p.task.id,
            source_group: p.task.source_group,
            group_key: merged.get(p.task.source_group) ?? p.task.source_group,
            language: p.task.language,
            instruction: p.task.instruction,
            files: p.task.files,
            public_tests: p.task.public_tests,
            hidden_tests: p.task.hidden_tests,
            reference: p.task.reference,
            metadata: p.task.metadata,
            origin: typeof p.task.metadata.origin === "string" ? p.task.metadata.origin : "",
            fingerprint: p.fingerprint,
            normalized_hash: p.normalizedHash,
            minhash: p.minhash,
            size_bytes: p.bytes,
            import_id: importId,
          })),
        );
      }
      const all = await tx
        .select({ id: tasks.taskId, group: tasks.groupKey, signature: tasks.minhash })
        .from(tasks)
        .where(eq(tasks.poolId, pool.id));
      const proposals = proposeGroupMerges(all, { threshold: input.mergeThreshold, onlyInvolving: new Set(ids) });
      for (let i = 0; i < proposals.length; i += BATCH) {
        await tx
          .insert(groupMergeProposals)
          .values(proposals.slice(i, i + BATCH).map((p) => ({ poolId: pool.id, ...p })))
          .onConflictDoNothing();
      }
      const snapshotHash = await refreshPoolStats(tx, pool.id);
      // `existing` looks only at rows of earlier imports (a null import_id is a pre-tracking row).
      const [dups] = await queryRows<{ exact: number; normalized: number; existing: number }>(
        tx,
        sql`
        select count(*) filter (where exists (select 1 from tasks o where o.pool_id = t.pool_id and o.fingerprint = t.fingerprint and o.id <> t.id))::int as exact,
               count(*) filter (where exists (select 1 from tasks o where o.pool_id = t.pool_id and o.normalized_hash = t.normalized_hash and o.id <> t.id))::int as normalized,
               count(*) filter (where exists (select 1 from tasks o where o.pool_id = t.pool_id and o.fingerprint = t.fingerprint
                 and o.import_id is distinct from t.import_id))::int as existing
        from tasks t where t.import_id = ${importId}`,
      );
      return {
        ok: true as const,
        poolId: pool.id,
        imported: prepared.length,
        exactDuplicates: dups?.exact ?? 0,
        normalizedDuplicates: dups?.normalized ?? 0,
        duplicatesOfExisting: dups?.existing ?? 0,
        mergeProposals: proposals.length,
        snapshotHash,
      };
    });
    // Fresh statistics after a bulk load, or the planner keeps its empty-table estimates and sorts
    // whole pools instead of walking the keyset index.
    if (prepared.length >= 1000) await db.execute(sql`analyze tasks`);
    return result;
  } catch (err) {
    if (err instanceof ImportRejected) return { ok: false, problems: err.problems };
    throw err;
  }
}

// One JSON parameter per batch, unpacked by Postgres: building thousands of jsonb parameters in
// the query builder cost more than the database's work.
async function insertTaskRows(db: Db, rows: Record<string, unknown>[]) {
  await db.execute(sql`
    insert into tasks (pool_id, task_id, source_group, group_key, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, import_id)
    select pool_id, task_id, source_group, group_key, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, import_id
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(pool_id uuid, task_id text, source_group text, group_key text, language text, instruction text,
      files jsonb, public_tests jsonb, hidden_tests jsonb, reference jsonb, metadata jsonb, origin text, fingerprint text, normalized_hash text, minhash int[], size_bytes int, import_id uuid)`);
}

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
  >,
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
});

export async function listMergeProposals(
  db: Db,
  opts: { poolId: string; status?: "pending" | "accepted" | "rejected" },
) {
  const conds = [eq(groupMergeProposals.poolId, opts.poolId)];
  if (opts.status) conds.push(eq(groupMergeProposals.status, opts.status));
  return db
    .select()
    .from(groupMergeProposals)
    .where(and(...conds))
    .orderBy(desc(groupMergeProposals.similarity), asc(groupMergeProposals.groupA))
    .limit(1000);
}

/** Accepting folds one group into the other for every task (and future imports); rejecting only records it. */
export async function decideMerge(db: Db, opts: { id: string; accept: boolean; userId?: string | null }) {
  return db.transaction(async (tx) => {
    const [p] = await tx.select().from(groupMergeProposals).where(eq(groupMergeProposals.id, opts.id)).for("update");
    if (!p) throw new DomainError("NOT_FOUND", "no such merge proposal");
    if (p.status !== "pending") throw new DomainError("CONFLICT", `proposal already ${p.status}`);
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
  });
}
