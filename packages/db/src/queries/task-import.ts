import { and, eq, inArray, sql } from "drizzle-orm";
import {
  DomainError,
  IMPORT_BATCH,
  createImportPreparer,
  proposeClusters,
  type ClusterProposals,
  type ImportPreparer,
  type TaskLimits,
  type TaskProblem,
} from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { groupMergeProposals, taskPools, tasks } from "../schema";
import { refreshPoolStats } from "./tasks";

// Pool imports: validate the whole file (the preparer's work), then write it in one transaction.
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
  /** Where the file is parsed and the proposals computed: in process unless given (the server's is a worker thread). */
  preparer?: ImportPreparer;
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

const LOOKUP_CHUNK = 5000;

/**
 * All-or-nothing import of a Task spec v1 file into a pool (created when missing): the whole file
 * is validated first, then written in one transaction; any problem (including an id already in
 * the pool) leaves the database untouched. Used by the upload endpoint, the CLI and the bootstrap.
 */
export async function importPool(db: Db, input: ImportPoolInput): Promise<ImportResult> {
  const preparer = input.preparer ?? createImportPreparer();
  try {
    return await importPrepared(db, input, preparer);
  } finally {
    await preparer.close();
  }
}

async function importPrepared(db: Db, input: ImportPoolInput, preparer: ImportPreparer): Promise<ImportResult> {
  const prepared = await preparer.prepare(input.lines, input.limits);
  if (!prepared.ok) return { ok: false, problems: prepared.problems };
  const refs = prepared.tasks;
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
      const ids = refs.map((p) => p.id);
      const clashes = new Set<string>();
      for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
        const rows = await tx
          .select({ taskId: tasks.taskId })
          .from(tasks)
          .where(and(eq(tasks.poolId, pool.id), inArray(tasks.taskId, ids.slice(i, i + LOOKUP_CHUNK))));
        for (const r of rows) clashes.add(r.taskId);
      }
      if (clashes.size > 0) {
        throw new ImportRejected(
          refs
            .filter((p) => clashes.has(p.id))
            .map((p) => ({
              line: p.line,
              field: "id",
              code: "duplicate_id" as const,
              message: `duplicate id "${p.id}" (already in pool "${input.name}")`,
              taskId: p.id,
            })),
        );
      }
      // A group merged earlier keeps absorbing its new variants. Looked up in chunks: one
      // parameter per group would pass Postgres's 65,535-parameter limit at 100k groups.
      const groups = [...new Set(refs.map((p) => p.group))];
      const merged = new Map<string, string>();
      for (let i = 0; i < groups.length; i += LOOKUP_CHUNK) {
        const known = await tx
          .selectDistinct({ sourceGroup: tasks.sourceGroup, groupKey: tasks.groupKey })
          .from(tasks)
          .where(and(eq(tasks.poolId, pool.id), inArray(tasks.sourceGroup, groups.slice(i, i + LOOKUP_CHUNK))));
        for (const k of known) if (k.groupKey !== k.sourceGroup) merged.set(k.sourceGroup, k.groupKey);
      }
      // The pool's earlier rows as one JSON text: decoding it and the proposals are the preparer's work.
      const [before] = await queryRows<{ rows: string }>(
        tx,
        sql`select coalesce(json_agg(json_build_object('id', task_id, 'group', group_key, 'cluster', cluster,
              'signature', minhash, 'reference', reference)), '[]')::text as rows
            from tasks where pool_id = ${pool.id}`,
      );
      const importId = crypto.randomUUID();
      const mergedJson = JSON.stringify(Object.fromEntries(merged));
      for (const batch of prepared.batches) await insertTaskRows(tx, pool.id, importId, mergedJson, batch);
      const findings = await preparer.findings(before?.rows ?? "[]", merged, input.mergeThreshold);
      const proposals = findings.merges;
      for (let i = 0; i < proposals.length; i += IMPORT_BATCH) {
        await tx
          .insert(groupMergeProposals)
          .values(proposals.slice(i, i + IMPORT_BATCH).map((p) => ({ poolId: pool.id, ...p })))
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
        imported: refs.length,
        exactDuplicates: dups?.exact ?? 0,
        normalizedDuplicates: dups?.normalized ?? 0,
        duplicatesOfExisting: dups?.existing ?? 0,
        mergeProposals: proposals.length,
        snapshotHash,
        clusterProposals: findings.clusters,
      };
    });
    // Fresh statistics after a bulk load, or the planner keeps its empty-table estimates and sorts
    // whole pools instead of walking the keyset index.
    if (refs.length >= 1000) await db.execute(sql`analyze tasks`);
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

// One JSON parameter per batch (prepared as text by the preparer), unpacked by Postgres: building
// thousands of jsonb parameters in the query builder cost more than the database's work. The pool,
// the import and the group key (an earlier merge's, else the source group) are filled in here.
async function insertTaskRows(db: Db, poolId: string, importId: string, mergedJson: string, batch: string) {
  await db.execute(sql`
    insert into tasks (pool_id, task_id, source_group, group_key, cluster, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, import_id)
    select ${poolId}::uuid, task_id, source_group, coalesce(${mergedJson}::jsonb ->> source_group, source_group), cluster, language, instruction, files, public_tests, hidden_tests, reference, metadata, origin, fingerprint, normalized_hash, minhash, size_bytes, ${importId}::uuid
    from jsonb_to_recordset(${batch}::jsonb) as x(task_id text, source_group text, cluster text, language text, instruction text,
      files jsonb, public_tests jsonb, hidden_tests jsonb, reference jsonb, metadata jsonb, origin text, fingerprint text, normalized_hash text, minhash int[], size_bytes int)`);
}
