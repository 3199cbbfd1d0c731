import { and, desc, eq, gt, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Throughput } from "@agentlab/core";
import type { Db } from "../client";
import { agents, jobs } from "../schema";

// Recent measured throughput of the online agents (the experiment form's work estimate): agent-seconds per
// answer generated and per candidate graded, over the latest succeeded jobs of the last 7 days.

const RECENT_JOBS = 50;

async function measure(db: Db, types: string[], items: ReturnType<typeof sql<number>>) {
  const recent = db
    .select({
      s: sql<number>`extract(epoch from (${jobs.finishedAt} - ${jobs.startedAt}))`.as("s"),
      i: items.as("i"),
    })
    .from(jobs)
    .where(
      and(
        inArray(jobs.type, types),
        eq(jobs.state, "succeeded"),
        isNotNull(jobs.startedAt),
        gt(jobs.finishedAt, sql`now() - interval '7 days'`),
      ),
    )
    .orderBy(desc(jobs.finishedAt))
    .limit(RECENT_JOBS)
    .as("recent");
  const [r] = await db
    .select({
      seconds: sql<number>`coalesce(sum(${recent.s}), 0)::float8`,
      items: sql<number>`coalesce(sum(${recent.i}), 0)::float8`,
      jobs: sql<number>`count(*)::int`,
    })
    .from(recent);
  if (!r || !r.jobs || !(Number(r.items) > 0)) return null;
  return { secondsPerItem: Number(r.seconds) / Number(r.items), items: Number(r.items), jobs: Number(r.jobs) };
}

export async function recentThroughput(db: Db): Promise<Throughput> {
  const [generate, batch, single, online] = await Promise.all([
    // A generate job's answers, a grade-batch job's candidates, one candidate per grade job.
    measure(db, ["generate"], sql<number>`coalesce(jsonb_array_length(${jobs.result}->'outputs'), 0)`),
    measure(db, ["grade-batch"], sql<number>`coalesce(jsonb_array_length(${jobs.result}->'items'), 0)`),
    measure(db, ["grade"], sql<number>`1`),
    db
      .select({ n: sql<number>`count(*)::int` })
      .from(agents)
      .where(and(eq(agents.online, true), eq(agents.drain, false), isNull(agents.revokedAt))),
  ]);
  // Evaluations grade in batches where they exist; single grade jobs are the fallback measurement.
  return { generate, grade: batch ?? single, agents: Number(online[0]?.n ?? 0) };
}
