import { sql } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import { queryRows, type Db } from "../client";

// Full-text search in task instructions. Postgres's own text search (english stemming over the
// stored `instruction_tsv` column and its GIN index) works the same on the server and in PGlite, which ships
// pg_trgm only as an opt-in extension; words, "quoted phrases", OR and -exclusions follow
// websearch_to_tsquery's syntax, so no user text can make the query invalid.

export type TaskSearchHit = {
  id: string;
  taskId: string;
  groupKey: string;
  origin: string;
  rank: number;
  /** The instruction around the matches, matches wrapped in «…». */
  snippet: string;
};

export type TaskSearchPage = { items: TaskSearchHit[]; total: number; offset: number };

/** Deepest page served: relevance paging walks the matches, so a bound keeps one request cheap. */
export const SEARCH_MAX_OFFSET = 10_000;

/** Tasks of a pool whose instruction matches `text`, best first (ties in id order), with the total. */
export async function searchTasks(
  db: Db,
  opts: { poolId: string; text: string; offset: number; limit: number },
): Promise<TaskSearchPage> {
  if (opts.offset > SEARCH_MAX_OFFSET)
    throw new DomainError("BAD_REQUEST", `offset: at most ${SEARCH_MAX_OFFSET}; narrow the search instead`);
  const query = sql`websearch_to_tsquery('english', ${opts.text})`;
  // Stored (generated) so ranking thousands of matches does not re-parse each instruction.
  const doc = sql`t.instruction_tsv`;
  const [count] = await queryRows<{ total: number }>(
    db,
    sql`select count(*)::int as total from tasks t where t.pool_id = ${opts.poolId} and ${doc} @@ ${query}`,
  );
  const total = count?.total ?? 0;
  if (total === 0 || opts.offset >= total) return { items: [], total, offset: opts.offset };
  const items = await queryRows<TaskSearchHit>(
    db,
    sql`select t.id, t.task_id as "taskId", t.group_key as "groupKey", t.origin,
        ts_rank_cd(${doc}, ${query})::float8 as rank,
        ts_headline('english', t.instruction, ${query}, 'StartSel=«, StopSel=», MaxWords=30, MinWords=12, MaxFragments=2') as snippet
      from tasks t
      where t.pool_id = ${opts.poolId} and ${doc} @@ ${query}
      order by rank desc, t.task_id collate "C"
      offset ${opts.offset} limit ${opts.limit}`,
  );
  return { items, total, offset: opts.offset };
}
