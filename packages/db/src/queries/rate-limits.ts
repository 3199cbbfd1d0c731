import { eq, lt, sql } from "drizzle-orm";
import { queryRows, type Db } from "../client";
import { rateLimits } from "../schema";

// Token buckets in Postgres, so that every web instance spends from the same ones. Each
// key is one GCRA timestamp (schema/users.ts): a take moves it one interval on, and is refused when
// that would put it more than `capacity` intervals past now(). The database's clock is the only
// clock, so instances with skewed clocks still agree.

export type Bucket = { capacity: number; refillPerS: number };

const secs = (s: number) => sql`make_interval(secs => ${s})`;

/** Takes one token from `key`'s bucket; returns 0 when allowed, else the whole seconds to wait. */
export async function takeRateToken(db: Db, key: string, b: Bucket): Promise<number> {
  const t = 1 / b.refillPerS;
  const taken = await queryRows<{ ok: number }>(
    db,
    sql`insert into rate_limits as r (key, tat) values (${key}, now() + ${secs(t)})
        on conflict (key) do update set tat = greatest(r.tat, now()) + ${secs(t)}
          where greatest(r.tat, now()) + ${secs(t)} <= now() + ${secs(b.capacity * t)}
        returning 1 as ok`,
  );
  if (taken.length > 0) return 0;
  const [row] = await queryRows<{ wait: number }>(
    db,
    sql`select extract(epoch from tat - now())::float8 - ${(b.capacity - 1) * t} as wait from rate_limits where key = ${key}`,
  );
  return Math.max(1, Math.ceil(row?.wait ?? 1));
}

/** Gives one token back (never past a full bucket). */
export async function refundRateToken(db: Db, key: string, b: Bucket): Promise<void> {
  await queryRows(
    db,
    sql`update rate_limits set tat = greatest(now(), tat - ${secs(1 / b.refillPerS)}) where key = ${key}`,
  );
}

/** Fills `key`'s bucket again (a full bucket needs no row). */
export async function resetRateBucket(db: Db, key: string): Promise<void> {
  await db.delete(rateLimits).where(eq(rateLimits.key, key));
}

/** Drops full buckets (they carry no information): bounds the table under a spray of keys. */
export async function sweepRateBuckets(db: Db): Promise<number> {
  const gone = await db.delete(rateLimits).where(lt(rateLimits.tat, sql`now()`)).returning({ key: rateLimits.key });
  return gone.length;
}
