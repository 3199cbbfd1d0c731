import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { inArray, sql } from "drizzle-orm";
import { DomainError, EnqueueJob } from "@agentlab/core";
import type { Db } from "../../client";
import { experiments, jobs } from "../../schema";

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
    sharedWith: j.sharedWith ?? [],
    // An experiment's stage jobs are its creator's: the runner enqueues them on their behalf.
    createdBy:
      j.createdBy ??
      (j.experimentId
        ? sql<string>`(select ${experiments.createdBy} from ${experiments} where ${experiments.id} = ${j.experimentId})`
        : null),
  };
}
type Values = ReturnType<typeof jobValues>;

export async function enqueueJob(db: Db, input: EnqueueJob): Promise<Job> {
  const [job] = await enqueueJobs(db, [input]);
  if (!job) throw new Error("enqueue returned no job");
  return job;
}

/**
 * Enqueues many jobs with one multi-row insert; returns them in input order. Idempotent per
 * dedupe key: a key that exists already yields the existing job when that job asks for the same
 * work (ids are made here so that the rows can be matched back to their inputs), and a CONFLICT
 * when it does not.
 */
export async function enqueueJobs(db: Db, inputs: EnqueueJob[]): Promise<Job[]> {
  if (inputs.length === 0) return [];
  const values = inputs.map(jobValues);
  // One job is one statement and atomic by itself: no BEGIN/COMMIT round trips (an enqueue is on
  // the dispatch path), and a key it conflicts on inserted nothing. Reading back rows that a dedupe
  // key kept needs no transaction: ON CONFLICT waits for a concurrent insert of the key to commit.
  // Several are one transaction, so that a key refused for other work (below) inserts none of them.
  if (values.length === 1) return insertJobs(db, values);
  return db.transaction((tx) => insertJobs(tx, values));
}

const CHUNK = 1000;

async function insertJobs(db: Db, values: Values[]): Promise<Job[]> {
  const byId = new Map<string, Job>();
  for (let i = 0; i < values.length; i += CHUNK) {
    const rows = await db
      .insert(jobs)
      .values(values.slice(i, i + CHUNK).map(({ sharedWith: _, ...row }) => row))
      .onConflictDoNothing({ target: jobs.dedupeKey })
      .returning();
    rows.forEach((r) => byId.set(r.id, r));
  }
  const missingKeys = values.filter((v) => !byId.has(v.id) && v.dedupeKey).map((v) => v.dedupeKey as string);
  const existing = missingKeys.length ? await db.select().from(jobs).where(inArray(jobs.dedupeKey, missingKeys)) : [];
  const byKey = new Map(existing.map((r) => [r.dedupeKey, r]));
  return values.map((v) => {
    const own = byId.get(v.id);
    if (own) return own;
    const held = byKey.get(v.dedupeKey);
    if (!held) throw new Error("enqueue conflict without an existing job");
    assertSameWork(v, held);
    return held;
  });
}

// What the job does and where it may run (not its id, key or creator).
const SAME_WORK = [
  "type",
  "payload",
  "requiredLabels",
  "minGpus",
  "minGpuMemoryMb",
  "sandbox",
  "gpuShare",
  "priority",
  "maxAttempts",
  "maxDurationS",
  "experimentId",
] as const satisfies ReadonlyArray<keyof Job & keyof Values>;

// jsonb drops undefined members and orders keys its own way; compare what JSON keeps.
const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** The held job belongs to an experiment the caller shares this work with (a study's arms). */
const sharedOwner = (want: Values, held: Job): boolean =>
  held.experimentId !== null && want.sharedWith.includes(held.experimentId);

/**
 * The job a dedupe key already holds is adopted only if it is the same work: otherwise whoever
 * planted it first (another user, a stale build) would run their payload under this caller's name.
 */
function assertSameWork(want: Values, held: Job) {
  const differs = SAME_WORK.filter(
    (k) => !isDeepStrictEqual(plain(want[k]), plain(held[k])) && !(k === "experimentId" && sharedOwner(want, held)),
  );
  if (differs.length > 0)
    throw new DomainError(
      "CONFLICT",
      `dedupe key ${want.dedupeKey} is held by job ${held.id} with a different ${differs.join(", ")}`,
    );
}
