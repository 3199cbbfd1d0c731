import { and, eq, inArray, sql } from "drizzle-orm";
import type { TeacherReply } from "@agentlab/core";
import { queryRows, type Db } from "../client";
import { jobs, teacherLedger, teacherTurns } from "../schema";

// A teacher policy's turns in episode jobs: which attempt may ask (the running one, from the agent
// that holds it), the turn cache, and each fresh call's ledger line with the job that made it.

/** The job of an attempt this agent holds and that is still running; undefined for anything else (stale, foreign, over). */
export async function heldAttemptJob(
  db: Db,
  agentId: string,
  ref: { jobId: string; attemptId: string },
): Promise<{ type: string; payload: unknown; experimentId: string | null } | undefined> {
  const [row] = await db
    .select({ type: jobs.type, payload: jobs.payload, experimentId: jobs.experimentId })
    .from(jobs)
    .where(
      and(
        eq(jobs.id, ref.jobId),
        eq(jobs.currentAttemptId, ref.attemptId),
        eq(jobs.agentId, agentId),
        inArray(jobs.state, ["running", "canceling"]),
      ),
    );
  return row;
}

export type TeacherTurnRow = typeof teacherTurns.$inferSelect;

export async function findTeacherTurn(db: Db, cacheKey: string): Promise<TeacherTurnRow | undefined> {
  const [row] = await db.select().from(teacherTurns).where(eq(teacherTurns.cacheKey, cacheKey));
  return row;
}

/** What the job's teacher calls have cost so far, every attempt together. */
export async function jobTeacherSpend(db: Db, jobId: string): Promise<number> {
  const [row] = await queryRows<{ cost: number }>(
    db,
    sql`select coalesce(sum(cost_usd), 0)::float8 as cost from teacher_ledger where job_id = ${jobId}`,
  );
  return row?.cost ?? 0;
}

/**
 * A fresh turn and its ledger line, in one transaction. Two instances that raced on one question
 * both paid, so both ledger lines stay; the cache keeps the first answer.
 */
export async function recordTeacherTurn(
  db: Db,
  t: {
    cacheKey: string;
    providerId: string;
    model: string;
    jobId: string;
    experimentId: string | null;
    reply: TeacherReply;
    tokensIn: number;
    tokensOut: number;
    costUsd: number;
    latencyMs: number;
  },
): Promise<void> {
  await db.transaction(async (tx) => {
    const { experimentId, ...turn } = t;
    await tx.insert(teacherTurns).values(turn).onConflictDoNothing();
    await tx.insert(teacherLedger).values({
      providerId: t.providerId,
      model: t.model,
      jobId: t.jobId,
      experimentId,
      tokensIn: t.tokensIn,
      tokensOut: t.tokensOut,
      costUsd: t.costUsd,
    });
  });
}
