import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { JOB_STATES, TERMINAL_REASONS, type JobPayload, type JobType } from "@agentlab/core";
import { agents } from "./agents";
import { users } from "./users";

// Vocabularies come from core (one definition for the database, the queue and the UI).
export const jobStateEnum = pgEnum("job_state", JOB_STATES);
export const terminalReasonEnum = pgEnum("terminal_reason", TERMINAL_REASONS);

export const jobs = pgTable(
  "jobs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    type: text("type").notNull(),
    payload: jsonb("payload").$type<JobPayload<JobType>>().notNull(),
    state: jobStateEnum("state").notNull().default("queued"),
    terminalReason: terminalReasonEnum("terminal_reason"),
    requiredLabels: text("required_labels").array().notNull().default([]),
    minGpus: integer("min_gpus").notNull().default(0),
    minGpuMemoryMb: integer("min_gpu_memory_mb").notNull().default(0),
    sandbox: text("sandbox"),
    // GPU jobs hold their GPUs alone unless they declare they can share (the claim counts them).
    gpuShare: boolean("gpu_share").notNull().default(false),
    priority: integer("priority").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(3),
    attempts: integer("attempts").notNull().default(0),
    maxDurationS: integer("max_duration_s").notNull().default(3600),
    // The live attempt: the fencing token every write must carry.
    currentAttemptId: uuid("current_attempt_id"),
    agentId: uuid("agent_id").references(() => agents.id, { onDelete: "set null" }),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    // A requeued job is not claimed before this (core retryVerdict's backoff); null: at once.
    notBefore: timestamp("not_before", { withTimezone: true }),
    result: jsonb("result").$type<Record<string, unknown>>(),
    error: text("error"),
    progress: jsonb("progress").$type<Record<string, unknown>>(),
    experimentId: uuid("experiment_id"),
    dedupeKey: text("dedupe_key"),
    // Who asked for it (an experiment's jobs: the experiment's creator); null: the server's own work.
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    // The claim scans queued jobs in priority order; a partial index keeps it small.
    index("jobs_queued_idx").on(t.priority.desc(), t.createdAt).where(sql`${t.state} = 'queued'`),
    index("jobs_lease_idx").on(t.leaseExpiresAt).where(sql`${t.state} in ('running', 'canceling')`),
    index("jobs_experiment_idx").on(t.experimentId),
    uniqueIndex("jobs_dedupe_idx").on(t.dedupeKey),
  ],
);

export const jobAttempts = pgTable(
  "job_attempts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    jobId: uuid("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    agentId: uuid("agent_id").references(() => agents.id, { onDelete: "set null" }),
    number: integer("number").notNull(),
    reason: terminalReasonEnum("reason"),
    exitCode: integer("exit_code"),
    signal: text("signal"),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [index("job_attempts_job_idx").on(t.jobId)],
);

export const jobLogs = pgTable(
  "job_logs",
  {
    attemptId: uuid("attempt_id")
      .notNull()
      .references(() => jobAttempts.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    stream: text("stream").notNull(),
    data: text("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.seq] })],
);

export const jobProgress = pgTable(
  "job_progress",
  {
    attemptId: uuid("attempt_id")
      .notNull()
      .references(() => jobAttempts.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.seq] })],
);

// Content-addressed blobs (adapters, datasets); the bytes live in the artifact store on disk.
export const artifacts = pgTable("artifacts", {
  sha256: text("sha256").primaryKey(),
  sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const jobArtifacts = pgTable(
  "job_artifacts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    jobId: uuid("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    attemptId: uuid("attempt_id")
      .notNull()
      .references(() => jobAttempts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    sha256: text("sha256")
      .notNull()
      .references(() => artifacts.sha256),
    meta: jsonb("meta").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  // job_idx: a claim lists the artifacts earlier attempts of its job uploaded (resumption).
  (t) => [uniqueIndex("job_artifacts_name_idx").on(t.attemptId, t.name), index("job_artifacts_job_idx").on(t.jobId)],
);
