import { eq, sql } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { sftDatasets, splits, taskPools, teacherProviders } from "../schema";

// Archive (hide from lists and pickers, reversible) and delete (only while nothing depends on the
// row) for pools, splits, SFT datasets and providers. Experiments are archived in queries/runs.ts
// and never deleted: an experiment is the record its jobs and report point at.

export type ArchivableKind = "pool" | "split" | "dataset" | "provider";

const TABLES = { pool: taskPools, split: splits, dataset: sftDatasets, provider: teacherProviders } as const;

/** Sets or clears `archived_at`; the frozen-split and snapshot guards let exactly this column change. */
export async function setArchived(db: Db, kind: ArchivableKind, id: string, archived: boolean) {
  const table = TABLES[kind];
  const rows = await db
    .update(table)
    .set({ archivedAt: archived ? sql`now()` : null })
    .where(eq(table.id, id))
    .returning({ id: table.id, archivedAt: table.archivedAt });
  const [row] = rows;
  if (!row) throw new DomainError("NOT_FOUND", `no such ${kind}`);
  return row;
}

/** What keeps a row from being deleted, as "N things" phrases; empty when it can go. */
export type Dependents = string[];

const phrase = (n: number, one: string, many: string) => (n === 1 ? `1 ${one}` : `${n} ${many}`);

function refuse(kind: ArchivableKind, name: string, deps: Dependents): never {
  throw new DomainError(
    "CONFLICT",
    `${kind} "${name}" is used by ${deps.join(", ")}; it cannot be deleted (archive it to hide it instead)`,
  );
}

async function poolDependents(db: Db, id: string): Promise<Dependents> {
  const [r] = await queryRows<{ splits: number; audits: number }>(
    db,
    sql`select (select count(*)::int from splits where pool_id = ${id}) as splits,
      (select count(*)::int from task_audits a join tasks t on t.id = a.task_row_id
        where t.pool_id = ${id} and a.status = 'pending') as audits`,
  );
  const deps: Dependents = [];
  if (r?.splits) deps.push(phrase(r.splits, "split", "splits"));
  if (r?.audits) deps.push(phrase(r.audits, "running audit", "running audits"));
  return deps;
}

async function splitDependents(db: Db, id: string): Promise<Dependents> {
  const [r] = await queryRows<{ experiments: number; collections: number; datasets: number }>(
    db,
    sql`select (select count(*)::int from experiments where split_id = ${id}) as experiments,
      (select count(*)::int from teacher_collections where split_id = ${id}) as collections,
      (select count(*)::int from sft_datasets where split_id = ${id}) as datasets`,
  );
  const deps: Dependents = [];
  if (r?.experiments) deps.push(phrase(r.experiments, "experiment", "experiments"));
  if (r?.collections) deps.push(phrase(r.collections, "collection", "collections"));
  if (r?.datasets) deps.push(phrase(r.datasets, "dataset", "datasets"));
  return deps;
}

// An experiment uses a snapshot when it was built for it, reuses it (config.datasetId) or trained
// on it (the dataset stage's output); a replay's result is derived from it (parent_id).
async function datasetDependents(db: Db, id: string): Promise<Dependents> {
  const [r] = await queryRows<{ experiments: number; derived: number }>(
    db,
    sql`select (select count(*)::int from experiments e where e.config ->> 'datasetId' = ${id}
          or e.id = (select experiment_id from sft_datasets where id = ${id})
          or exists (select 1 from experiment_stages s where s.experiment_id = e.id and s.output ->> 'datasetId' = ${id})) as experiments,
      (select count(*)::int from sft_datasets where parent_id = ${id}) as derived`,
  );
  const deps: Dependents = [];
  if (r?.experiments) deps.push(phrase(r.experiments, "experiment", "experiments"));
  if (r?.derived) deps.push(phrase(r.derived, "replayed snapshot", "replayed snapshots"));
  return deps;
}

/** Deletes a pool with its tasks, merge proposals and audits; refused for the built-in pool and while a split exists. */
export async function deletePool(db: Db, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    // The row lock orders this against a concurrent import or split of the same pool.
    const [pool] = await tx.select().from(taskPools).where(eq(taskPools.id, id)).for("update");
    if (!pool) throw new DomainError("NOT_FOUND", "no such pool");
    if (pool.builtin)
      throw new DomainError("CONFLICT", `pool "${pool.name}" is built in (re-created on start); archive it instead`);
    const deps = await poolDependents(tx, id);
    if (deps.length > 0) refuse("pool", pool.name, deps);
    await tx.delete(taskPools).where(eq(taskPools.id, id));
  });
}

/** Deletes a split and its assignments; refused while an experiment, collection or dataset uses it. */
export async function deleteSplit(db: Db, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    // FOR UPDATE (no trigger fires on a lock) waits for a concurrent experiment that references it.
    const [split] = await tx.select().from(splits).where(eq(splits.id, id)).for("update");
    if (!split) throw new DomainError("NOT_FOUND", "no such split");
    const deps = await splitDependents(tx, id);
    if (deps.length > 0) refuse("split", split.name, deps);
    // Names this one split to the frozen guard for the rest of the transaction (migration 0013).
    await tx.execute(sql`select set_config('agentlab.delete_split', ${id}, true)`);
    await tx.execute(sql`delete from split_assignments where split_id = ${id}`);
    await tx.delete(splits).where(eq(splits.id, id));
  });
}

/** Deletes an SFT snapshot with its samples and replays; refused while an experiment or a replayed snapshot uses it. */
export async function deleteDataset(db: Db, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [ds] = await tx.select().from(sftDatasets).where(eq(sftDatasets.id, id)).for("update");
    if (!ds) throw new DomainError("NOT_FOUND", "no such dataset");
    const deps = await datasetDependents(tx, id);
    if (deps.length > 0) refuse("dataset", ds.name, deps);
    await tx.execute(sql`select set_config('agentlab.delete_dataset', ${id}, true)`);
    await tx.delete(sftDatasets).where(eq(sftDatasets.id, id));
  });
}
