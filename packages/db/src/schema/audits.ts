import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  real,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { AUDIT_ROW_STATUSES, type AuditResult, type GradeVerdict } from "@agentlab/core";
import { jobs } from "./jobs";
import { tasks } from "./tasks";
import { users } from "./users";

// Task admission audits. One row per (task, audit request): the row is written pending
// when the `audit` job is enqueued and filled in by the server's sync loop when the job ends.
// A task's audit status is its newest row; older rows are the audit history.
// `passed`/`failed` are AuditStatus from core (the agent's verdict); `error` means the job ended
// without an AuditResult (canceled, infra failure), which is never an admission.
export const auditRowStatusEnum = pgEnum("audit_row_status", AUDIT_ROW_STATUSES);

export const taskAudits = pgTable(
  "task_audits",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    // Tasks sharing content (fingerprint, reference, grader version, parameters) share one job.
    jobId: uuid("job_id").references(() => jobs.id, { onDelete: "set null" }),
    status: auditRowStatusEnum("status").notNull().default("pending"),
    result: jsonb("result").$type<AuditResult>(),
    mutationScore: real("mutation_score"),
    mutantsTotal: integer("mutants_total"),
    // The backend the job required; `unsandboxed` is what the agent reports it graded with.
    sandbox: text("sandbox").notNull(),
    unsandboxed: boolean("unsandboxed"),
    error: text("error"),
    graderVersion: text("grader_version").notNull(),
    round: integer("round").notNull().default(0),
    requestedBy: uuid("requested_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    // "Newest audit of a task" is an index probe for the pool filter and summary.
    index("task_audits_task_idx").on(t.taskRowId, t.createdAt.desc()),
    // The sync loop scans only pending rows.
    index("task_audits_pending_idx").on(t.jobId).where(sql`${t.status} = 'pending'`),
  ],
);

// The mutants an audit saw the tests kill, with their programs: the rejected answers of near-miss
// preference pairs (core nearMissRejected). Written with the audit's result, in its transaction.
export const taskAuditMutants = pgTable(
  "task_audit_mutants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    auditId: uuid("audit_id")
      .notNull()
      .references(() => taskAudits.id, { onDelete: "cascade" }),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    /** The mutant's order in the audit's result. */
    position: integer("position").notNull(),
    path: text("path").notNull(),
    operator: text("operator").notNull(),
    line: integer("line").notNull(),
    description: text("description").notNull(),
    source: text("source").notNull(),
    verdict: text("verdict").$type<GradeVerdict>().notNull(),
    failingTests: jsonb("failing_tests").$type<string[]>().notNull(),
  },
  (t) => [
    index("task_audit_mutants_audit_idx").on(t.auditId, t.position),
    index("task_audit_mutants_task_idx").on(t.taskRowId),
    // killed: the tests caught it, so it never passed
    check("task_audit_mutants_killed", sql`${t.verdict} <> 'pass'`),
  ],
);
