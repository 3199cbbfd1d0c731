// What the queue benches report after a drain: jobs that did not succeed (lost) and jobs that
// were attempted more than once (duplicated), read from the database, and latency percentiles.
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@agentlab/db";

export async function queueOutcome(db: Db): Promise<{ lost: number; duplicated: number }> {
  const [dup] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from (select job_id from job_attempts group by job_id having count(*) > 1) d`,
  );
  const [lost] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from jobs where state <> 'succeeded'`,
  );
  return { lost: lost?.n ?? -1, duplicated: dup?.n ?? -1 };
}

export async function succeededCount(db: Db): Promise<number> {
  const [r] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from jobs where state = 'succeeded'`);
  return r?.n ?? 0;
}

/** The p-quantile (0..1) of the samples, in ms to two decimals; sorts `samples` in place. */
export function percentileMs(samples: number[], p: number): number {
  samples.sort((a, b) => a - b);
  return Math.round((samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? 0) * 100) / 100;
}
