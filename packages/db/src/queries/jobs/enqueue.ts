import { randomUUID } from "node:crypto";
import { inArray } from "drizzle-orm";
import { EnqueueJob } from "@agentlab/core";
import type { Db } from "../../client";
import { jobs } from "../../schema";

export type Job = typeof jobs.$inferSelect;

// The payload is parsed by its type's contract (JOB_CONTRACTS) and stored with its defaults filled,
// so the row says exactly what the agent will run.
function jobValues(input: EnqueueJob) {
  const j = EnqueueJob.parse(input);
  return {
    id: randomUUID(),
    type: j.type,
    payload: j.payload,
    requiredLabels: j.requirements.labels,
    minGpus: j.requirements.gpus,
    minGpuMemoryMb: j.requirements.gpuMemoryMb,
    sandbox: j.requirements.sandbox ?? null,
    gpuShare: j.requirements.gpuShare ?? false,
    priority: j.priority,
    maxAttempts: j.maxAttempts,
    maxDurationS: j.maxDurationS,
    experimentId: j.experimentId ?? null,
    dedupeKey: j.dedupeKey ?? null,
  };
}

export async function enqueueJob(db: Db, input: EnqueueJob): Promise<Job> {
  const [job] = await enqueueJobs(db, [input]);
  if (!job) throw new Error("enqueue returned no job");
  return job;
}

/**
 * Enqueues many jobs with one multi-row insert; returns them in input order. Idempotent per
 * dedupe key: a key that exists already yields the existing job (ids are made here so that the
 * rows can be matched back to their inputs).
 */
export async function enqueueJobs(db: Db, inputs: EnqueueJob[]): Promise<Job[]> {
  if (inputs.length === 0) return [];
  const values = inputs.map(jobValues);
  // Up to one chunk, the insert is one statement and so atomic by itself: no BEGIN/COMMIT round
  // trips (an enqueue is on the dispatch path). Reading back rows that a dedupe key kept needs no
  // transaction either: ON CONFLICT waits for a concurrent insert of the key to commit.
  if (values.length <= CHUNK) return insertJobs(db, values);
  return db.transaction((tx) => insertJobs(tx, values));
}

const CHUNK = 1000;

async function insertJobs(db: Db, values: ReturnType<typeof jobValues>[]): Promise<Job[]> {
  const byId = new Map<string, Job>();
  for (let i = 0; i < values.length; i += CHUNK) {
    const rows = await db
      .insert(jobs)
      .values(values.slice(i, i + CHUNK))
      .onConflictDoNothing({ target: jobs.dedupeKey })
      .returning();
    rows.forEach((r) => byId.set(r.id, r));
  }
  const missingKeys = values.filter((v) => !byId.has(v.id) && v.dedupeKey).map((v) => v.dedupeKey as string);
  const existing = missingKeys.length ? await db.select().from(jobs).where(inArray(jobs.dedupeKey, missingKeys)) : [];
  const byKey = new Map(existing.map((r) => [r.dedupeKey, r]));
  return values.map((v) => {
    const row = byId.get(v.id) ?? byKey.get(v.dedupeKey);
    if (!row) throw new Error("enqueue conflict without an existing job");
    return row;
  });
}
