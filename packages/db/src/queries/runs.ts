import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { RunListQuery, RunSortKey } from "@agentlab/core/experiments/runs";
import type { Db } from "../client";
import { queryRows } from "../client";
import { experiments, reports } from "../schema";

// The runs table: one row per experiment with the figures of its stored report (read from the
// report JSON, which is immutable once written) and of its dataset stage. One SQL statement with
// the total, so the page pages instead of cutting silently.

export type RunRow = {
  id: string;
  name: string;
  state: "running" | "succeeded" | "failed" | "canceled";
  error: string | null;
  splitId: string;
  splitName: string;
  poolName: string;
  tags: string[];
  notes: string;
  createdAt: string;
  finishedAt: string | null;
  archivedAt: string | null;
  baseModel: string | null;
  samples: number | null;
  durationMs: number | null;
  reportId: string | null;
  outcome: "adapter_selected" | "base_kept" | null;
  testN: number | null;
  testBase: number | null;
  testSft: number | null;
  delta: number | null;
  ciLo: number | null;
  ciHi: number | null;
  p: number | null;
  significant: boolean | null;
};

const test = sql`r.body->'summary'->1`;
const columns: Record<RunSortKey, SQL> = {
  createdAt: sql`e.created_at`,
  name: sql`e.name`,
  state: sql`e.state::text`,
  outcome: sql`r.body->'outcome'->>'kind'`,
  testBase: sql`(${test}->'base'->>'value')::float8`,
  testSft: sql`(${test}->'sft'->>'value')::float8`,
  delta: sql`(${test}->'stats'->>'delta')::float8`,
  p: sql`(${test}->'stats'->>'p')::float8`,
  baseModel: sql`e.config->'baseModel'->>'ref'`,
  samples: sql`(ds.output->>'samples')::int`,
  durationMs: sql`extract(epoch from (coalesce(e.finished_at, now()) - e.created_at)) * 1000`,
};

/** `ids` (the compare view) selects those experiments, archived or not. */
export async function listRuns(
  db: Db,
  q: RunListQuery & { ids?: string[] },
): Promise<{ total: number; rows: RunRow[] }> {
  const where: SQL[] = q.ids
    ? [
        sql`e.id in (${sql.join(
          q.ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`,
      ]
    : [q.archived ? sql`e.archived_at is not null` : sql`e.archived_at is null`];
  if (q.state) where.push(sql`e.state = ${q.state}`);
  if (q.outcome) where.push(sql`r.body->'outcome'->>'kind' = ${q.outcome}`);
  if (q.tag) where.push(sql`${q.tag} = any(e.tags)`);
  if (q.splitId) where.push(sql`e.split_id = ${q.splitId}`);
  if (q.q) {
    const like = `%${q.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(
      sql`(e.name ilike ${like} or coalesce(e.config->'baseModel'->>'ref', '') ilike ${like} or e.notes ilike ${like})`,
    );
  }
  const order = sql`${columns[q.sort]} ${sql.raw(q.dir === "asc" ? "asc" : "desc")} nulls last, e.created_at desc, e.id`;
  const rows = await queryRows<RunRow & { total: number }>(
    db,
    sql`select e.id, e.name, e.state, e.error, e.split_id as "splitId", s.name as "splitName", p.name as "poolName", e.tags, e.notes,
          e.created_at as "createdAt", e.finished_at as "finishedAt", e.archived_at as "archivedAt",
          ${columns.baseModel} as "baseModel", ${columns.samples} as samples, ${columns.durationMs}::float8 as "durationMs",
          r.id as "reportId", ${columns.outcome} as outcome, (${test}->>'n')::int as "testN",
          ${columns.testBase} as "testBase", ${columns.testSft} as "testSft", ${columns.delta} as delta,
          (${test}->'stats'->'ci'->>0)::float8 as "ciLo", (${test}->'stats'->'ci'->>1)::float8 as "ciHi",
          ${columns.p} as p, (${test}->>'significant')::boolean as significant,
          count(*) over ()::int as total
        from experiments e
        join splits s on s.id = e.split_id
        join task_pools p on p.id = s.pool_id
        left join reports r on r.experiment_id = e.id
        left join experiment_stages ds on ds.experiment_id = e.id and ds.key = 'dataset'
        where ${sql.join(where, sql` and `)}
        order by ${order}
        limit ${q.limit} offset ${q.offset}`,
  );
  const total = rows[0]?.total ?? (q.offset > 0 ? await countRuns(db, where) : 0);
  return {
    total,
    rows: rows.map(({ total: _t, ...r }) => ({
      ...r,
      createdAt: iso(r.createdAt),
      finishedAt: r.finishedAt && iso(r.finishedAt),
      archivedAt: r.archivedAt && iso(r.archivedAt),
    })),
  };
}

// A page past the end has no row to carry the window count.
async function countRuns(db: Db, where: SQL[]): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from experiments e left join reports r on r.experiment_id = e.id where ${sql.join(where, sql` and `)}`,
  );
  return row?.n ?? 0;
}

const iso = (d: string | Date): string => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export async function annotateRun(db: Db, id: string, patch: { tags?: string[]; notes?: string }): Promise<boolean> {
  const set: Partial<typeof experiments.$inferInsert> = {};
  if (patch.tags) set.tags = [...new Set(patch.tags)];
  if (patch.notes !== undefined) set.notes = patch.notes;
  if (Object.keys(set).length === 0) return true;
  const res = await db.update(experiments).set(set).where(eq(experiments.id, id)).returning({ id: experiments.id });
  return res.length > 0;
}

/** The distinct tags in use, for the filter's suggestions. */
export async function runTags(db: Db): Promise<string[]> {
  const rows = await queryRows<{ tag: string }>(
    db,
    sql`select distinct unnest(tags) as tag from experiments where archived_at is null order by 1`,
  );
  return rows.map((r) => r.tag);
}

export async function reportsOf(db: Db, experimentIds: string[]) {
  if (experimentIds.length === 0) return [];
  return db
    .select()
    .from(reports)
    .where(and(inArray(reports.experimentId, experimentIds)));
}

export async function setRunArchived(db: Db, id: string, archived: boolean): Promise<void> {
  await db
    .update(experiments)
    .set({ archivedAt: archived ? sql`now()` : null })
    .where(eq(experiments.id, id));
}

/** Base models used before, newest first, for the experiment form's picker. */
export async function recentBaseModels(
  db: Db,
  limit = 20,
): Promise<{ ref: string; source: string; lastUsed: string }[]> {
  const rows = await queryRows<{ ref: string; source: string; last_used: string | Date }>(
    db,
    sql`select e.config->'baseModel'->>'ref' as ref, max(e.config->'baseModel'->>'source') as source, max(e.created_at) as last_used
        from experiments e where e.config->'baseModel'->>'ref' is not null group by 1 order by 3 desc limit ${limit}`,
  );
  return rows.map((r) => ({ ref: r.ref, source: r.source, lastUsed: iso(r.last_used) }));
}
