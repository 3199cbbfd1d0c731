import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { DomainError, type PriceInput, type ProviderKind } from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { teacherLedger, teacherPrices, teacherProviders } from "../schema";

// Providers, prices and the budget ledger. Provider reads never select the sealed key: the only
// function that returns it is `providerSealedKey`, used by the collection runner.

export type ProviderRow = typeof teacherProviders.$inferSelect;
export type PublicProvider = Omit<ProviderRow, "apiKeySealed"> & { hasApiKey: boolean };

const publicColumns = {
  id: teacherProviders.id,
  name: teacherProviders.name,
  kind: teacherProviders.kind,
  baseUrl: teacherProviders.baseUrl,
  model: teacherProviders.model,
  extraParams: teacherProviders.extraParams,
  createdBy: teacherProviders.createdBy,
  createdAt: teacherProviders.createdAt,
  updatedAt: teacherProviders.updatedAt,
  archivedAt: teacherProviders.archivedAt,
  hasApiKey: sql<boolean>`${teacherProviders.apiKeySealed} is not null`,
};

export async function listProviders(db: Db, opts: { hideArchived?: boolean } = {}): Promise<PublicProvider[]> {
  return db
    .select(publicColumns)
    .from(teacherProviders)
    .where(opts.hideArchived ? isNull(teacherProviders.archivedAt) : undefined)
    .orderBy(teacherProviders.name);
}

export async function getProvider(db: Db, id: string): Promise<PublicProvider | undefined> {
  const [row] = await db.select(publicColumns).from(teacherProviders).where(eq(teacherProviders.id, id));
  return row;
}

export type NewProvider = {
  name: string;
  kind: ProviderKind;
  baseUrl: string | null;
  model: string;
  apiKeySealed: string | null;
  extraParams: Record<string, unknown>;
  createdBy?: string | null;
};

export async function insertProvider(db: Db, p: NewProvider): Promise<PublicProvider> {
  const [row] = await db
    .insert(teacherProviders)
    .values({ ...p, createdBy: p.createdBy ?? null })
    .onConflictDoNothing()
    .returning({ id: teacherProviders.id });
  if (!row) throw new DomainError("CONFLICT", `a provider named "${p.name}" exists already`);
  const out = await getProvider(db, row.id);
  if (!out) throw new DomainError("INTERNAL", "provider vanished after insert");
  return out;
}

/** The lab's reference oracle (a provider answering with each task's reference fix): an unarchived one, or a new one. */
export async function referenceOracle(
  db: Db,
  opts: { createdBy?: string | null; create: boolean },
): Promise<PublicProvider | null> {
  const existing = (await listProviders(db, { hideArchived: true })).find((p) => p.kind === "reference");
  if (existing || !opts.create) return existing ?? null;
  return insertProvider(db, {
    name: "reference oracle",
    kind: "reference",
    baseUrl: null,
    model: "reference",
    apiKeySealed: null,
    extraParams: {},
    createdBy: opts.createdBy ?? null,
  });
}

export async function updateProvider(
  db: Db,
  id: string,
  patch: Partial<Omit<NewProvider, "createdBy">>,
): Promise<PublicProvider> {
  const rows = await db
    .update(teacherProviders)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(teacherProviders.id, id))
    .returning({ id: teacherProviders.id });
  if (rows.length === 0) throw new DomainError("NOT_FOUND", "no such provider");
  const out = await getProvider(db, id);
  if (!out) throw new DomainError("NOT_FOUND", "no such provider");
  return out;
}

export async function deleteProvider(db: Db, id: string): Promise<void> {
  const [used] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from teacher_collections where provider_id = ${id}`,
  );
  if ((used?.n ?? 0) > 0)
    throw new DomainError("CONFLICT", "the provider has collections; it is kept for their record");
  await db.delete(teacherProviders).where(eq(teacherProviders.id, id));
}

/** The sealed key, for the runner only. */
export async function providerSealedKey(db: Db, id: string): Promise<string | null> {
  const [row] = await db
    .select({ k: teacherProviders.apiKeySealed })
    .from(teacherProviders)
    .where(eq(teacherProviders.id, id));
  return row?.k ?? null;
}

export async function listPrices(db: Db) {
  return db.select().from(teacherPrices).orderBy(teacherPrices.model);
}

export async function getPrice(db: Db, model: string) {
  const [row] = await db.select().from(teacherPrices).where(eq(teacherPrices.model, model));
  return row;
}

export async function setPrice(db: Db, p: PriceInput) {
  const [row] = await db
    .insert(teacherPrices)
    .values(p)
    .onConflictDoUpdate({
      target: teacherPrices.model,
      set: { inputPerMTok: p.inputPerMTok, outputPerMTok: p.outputPerMTok, updatedAt: sql`now()` },
    })
    .returning();
  return row;
}

export async function deletePrice(db: Db, model: string): Promise<void> {
  await db.delete(teacherPrices).where(eq(teacherPrices.model, model));
}

export type LedgerEntry = typeof teacherLedger.$inferInsert;

export async function addLedgerEntry(db: Db, e: LedgerEntry): Promise<void> {
  await db.insert(teacherLedger).values(e);
}

export type LedgerTotals = {
  key: string | null;
  label: string | null;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
};

/** Totals grouped by provider, experiment or collection (a collection is the unit of work that ran). */
export async function ledgerTotals(
  db: Db,
  by: "provider" | "experiment" | "collection",
  filter: { experimentId?: string; collectionId?: string } = {},
): Promise<LedgerTotals[]> {
  const conds = [sql`true`];
  if (filter.experimentId) conds.push(sql`l.experiment_id = ${filter.experimentId}`);
  if (filter.collectionId) conds.push(sql`l.collection_id = ${filter.collectionId}`);
  const key =
    by === "provider" ? sql`l.provider_id` : by === "experiment" ? sql`l.experiment_id` : sql`l.collection_id`;
  const label = by === "provider" ? sql`max(p.name)` : by === "collection" ? sql`max(c.name)` : sql`null`;
  return queryRows<LedgerTotals>(
    db,
    sql`select ${key}::text as key, ${label} as label, count(*)::int as calls, coalesce(sum(l.tokens_in), 0)::int as "tokensIn",
          coalesce(sum(l.tokens_out), 0)::int as "tokensOut", coalesce(sum(l.cost_usd), 0)::float8 as "costUsd"
        from teacher_ledger l left join teacher_providers p on p.id = l.provider_id left join teacher_collections c on c.id = l.collection_id
        where ${sql.join(conds, sql` and `)} group by ${key} order by "costUsd" desc`,
  );
}

export async function recentLedger(db: Db, opts: { collectionId?: string; limit: number }) {
  return db
    .select()
    .from(teacherLedger)
    .where(opts.collectionId ? and(eq(teacherLedger.collectionId, opts.collectionId)) : undefined)
    .orderBy(desc(teacherLedger.createdAt))
    .limit(opts.limit);
}
