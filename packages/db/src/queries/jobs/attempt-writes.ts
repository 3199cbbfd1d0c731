import { and, eq, inArray, sql } from "drizzle-orm";
import { storableJson, storableText, type LogChunk } from "@agentlab/core";
import { queryRows, type Db } from "../../client";
import { artifacts, jobArtifacts, jobLogs, jobProgress, jobs } from "../../schema";

// What an agent writes while an attempt runs (logs, progress, artifacts). A write is honoured only
// for the job's current attempt, and only from the agent holding it. Its text is stored through
// core's storableText/storableJson: one NUL in a program's output would otherwise fail the write,
// and the agent would retry that log chunk until its lease ran out.
const isCurrent = (jobId: string, attemptId: string, agentId: string) =>
  sql`exists (select 1 from jobs where id = ${jobId} and current_attempt_id = ${attemptId} and agent_id = ${agentId} and state in ('running', 'canceling'))`;

/** Upserts ordered log chunks of the current attempt; a stale attempt's writes are dropped. */
export async function appendLogs(
  db: Db,
  agentId: string,
  jobId: string,
  attemptId: string,
  chunks: LogChunk[],
): Promise<boolean> {
  const [ok] = await queryRows<{ ok: boolean }>(db, sql`select ${isCurrent(jobId, attemptId, agentId)} as ok`);
  if (!ok?.ok) return false;
  await db
    .insert(jobLogs)
    .values(chunks.map((c) => ({ attemptId, seq: c.seq, stream: c.stream, data: storableText(c.data) })))
    .onConflictDoNothing();
  return true;
}

export async function recordProgress(
  db: Db,
  agentId: string,
  jobId: string,
  attemptId: string,
  seq: number,
  raw: Record<string, unknown>,
): Promise<boolean> {
  const data = storableJson(raw);
  const updated = await db
    .update(jobs)
    .set({ progress: data })
    .where(
      and(
        eq(jobs.id, jobId),
        eq(jobs.currentAttemptId, attemptId),
        eq(jobs.agentId, agentId),
        inArray(jobs.state, ["running", "canceling"]),
      ),
    )
    .returning({ id: jobs.id });
  if (updated.length === 0) return false;
  await db.insert(jobProgress).values({ attemptId, seq, data }).onConflictDoNothing();
  return true;
}

export async function recordArtifactBlob(db: Db, sha256: string, sizeBytes: number) {
  await db.insert(artifacts).values({ sha256, sizeBytes }).onConflictDoNothing();
}

/** Links an uploaded blob to the attempt that produced it; refused for a stale attempt. */
export async function attachArtifact(
  db: Db,
  agentId: string,
  a: { jobId: string; attemptId: string; name: string; kind: string; sha256: string; meta: Record<string, unknown> },
): Promise<boolean> {
  const [ok] = await queryRows<{ ok: boolean }>(db, sql`select ${isCurrent(a.jobId, a.attemptId, agentId)} as ok`);
  if (!ok?.ok) return false;
  await db
    .insert(jobArtifacts)
    .values({ ...a, name: storableText(a.name), kind: storableText(a.kind), meta: storableJson(a.meta) })
    .onConflictDoNothing();
  return true;
}
