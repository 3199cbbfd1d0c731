import { and, eq, inArray, sql } from "drizzle-orm";
import {
  DomainError,
  minhashSignature,
  normalizedCodeHash,
  proposeClusters,
  proposeGroupMerges,
  taskFingerprint,
  taskTokens,
  validateTaskStream,
  type ClusterProposals,
  type TaskLimits,
  type TaskProblem,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { groupMergeProposals, taskPools, tasks } from "../schema";
import { refreshPoolStats } from "./tasks";

// Pool imports: validate the whole file, then write it in one transaction.
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
      /** Tasks of several source groups sharing one reference (poolClusterProposals), by proposed cluster. */
      clusterProposals: ClusterProposals;
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
            cluster: p.task.cluster ?? null,
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
      const clusterProposals = await poolClusterProposals(tx, pool.id);
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
        clusterProposals,
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

/**
 * Families of the pool's tasks whose references are identical or near-identical across source
 * groups, each with a proposed cluster (core proposeClusters): what the import result and the pool
 * page show, so the file can declare `cluster` and the report stops counting them as independent.
 */
export async function poolClusterProposals(db: Db, poolId: string): Promise<ClusterProposals> {
  const rows = await db
    .select({ id: tasks.taskId, group: tasks.groupKey, cluster: tasks.cluster, reference: tasks.reference })
    .from(tasks)
    .where(eq(tasks.poolId, poolId));
  return proposeClusters(rows);
}

// One JSON parameter per batch, unpacked by Postgres: building thousands of jsonb parameters in
// the query builder cost more than the database's work.
async function insertTaskRows(db: Db, rows: Record<string, unknown>[]) {
  await db.execute(sql`
    insert into tasks (pool_id, task_id, source_group, group_key, cluster, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, import_id)
    select pool_id, task_id, source_group, group_key, cluster, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, import_id
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(pool_id uuid, task_id text, source_group text, group_key text, cluster text, language text, instruction text,
      files jsonb, public_tests jsonb, hidden_tests jsonb, reference jsonb, metadata jsonb, origin text, fingerprint text, normalized_hash text, minhash int[], size_bytes int, import_id uuid)`);
}
