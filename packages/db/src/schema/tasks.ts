import {
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import {
  GRADING_ISOLATIONS,
  MERGE_STATUSES,
  SPLIT_PARTS,
  type LeakageReport,
  type SplitAdmission,
  type TaskFile,
  type TaskTestFile,
} from "@agentlab/core";
import { users } from "./users";

// Task pools, their tasks, near-duplicate group merge proposals, and frozen splits.
// A split is written unfrozen, filled, then frozen in the same transaction; from then on triggers
// (custom migration `frozen_splits`) refuse every UPDATE/DELETE/INSERT touching it or its rows.

export const taskPools = pgTable("task_pools", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  builtin: boolean("builtin").notNull().default(false),
  // Hash of (task id, effective group, fingerprint) of every task: what splits are computed from.
  snapshotHash: text("snapshot_hash").notNull(),
  taskCount: integer("task_count").notNull().default(0),
  groupCount: integer("group_count").notNull().default(0),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  // Hidden from lists and pickers by default (archive/restore); nothing else about the row changes.
  archivedAt: timestamp("archived_at", { withTimezone: true }),
});

// Postgres's text-search document type; drizzle has no built-in column for it.
const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

// How the task is graded (core's GradingIsolation): set from its newest finished admission audit.
export const gradingIsolationEnum = pgEnum("grading_isolation", GRADING_ISOLATIONS);

export const tasks = pgTable(
  "tasks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    poolId: uuid("pool_id")
      .notNull()
      .references(() => taskPools.id, { onDelete: "cascade" }),
    taskId: text("task_id").notNull(),
    // As written in the file; `groupKey` is the effective group after accepted merges.
    sourceGroup: text("source_group").notNull(),
    groupKey: text("group_key").notNull(),
    // The unit of dependence for inference (family, shape, source program), when the file declares
    // one; splits still keep source groups whole. Null: the effective group is the unit.
    cluster: text("cluster"),
    language: text("language").notNull(),
    instruction: text("instruction").notNull(),
    files: jsonb("files").$type<TaskFile[]>().notNull(),
    publicTests: jsonb("public_tests").$type<TaskTestFile[]>().notNull(),
    hiddenTests: jsonb("hidden_tests").$type<TaskTestFile[]>().notNull(),
    reference: jsonb("reference").$type<TaskTestFile[]>().notNull(),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull(),
    origin: text("origin").notNull().default(""),
    gradingIsolation: gradingIsolationEnum("grading_isolation").notNull().default("judge"),
    // An admin's reason for allowing in-process grading: without it the audit refuses a task
    // whose reference passes only in-process (the weaker mode is never chosen silently).
    inProcessReason: text("in_process_reason"),
    inProcessMarkedBy: uuid("in_process_marked_by").references(() => users.id, { onDelete: "set null" }),
    inProcessMarkedAt: timestamp("in_process_marked_at", { withTimezone: true }),
    fingerprint: text("fingerprint").notNull(),
    normalizedHash: text("normalized_hash").notNull(),
    minhash: integer("minhash").array().notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    importId: uuid("import_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    // The instruction parsed once for full-text search (tasks.search): ranking reads it instead of
    // re-parsing every matching instruction (10k matches: 7 s re-parsed vs 73 ms stored, probed).
    instructionTsv: tsvector("instruction_tsv").generatedAlwaysAs(sql`to_tsvector('english', "instruction")`),
  },
  (t) => [
    // Keyset pagination and prefix search (LIKE 'x%') both ride these: queries compare under
    // COLLATE "C" so that the order is bytewise and a prefix is a contiguous index range.
    uniqueIndex("tasks_pool_task_idx").on(t.poolId, sql`${t.taskId} collate "C"`),
    index("tasks_pool_group_idx").on(t.poolId, sql`${t.groupKey} collate "C"`),
    index("tasks_pool_fingerprint_idx").on(t.poolId, t.fingerprint),
    index("tasks_pool_normalized_idx").on(t.poolId, t.normalizedHash),
    index("tasks_pool_origin_idx").on(t.poolId, t.origin),
    // Full-text search in instructions (tasks.search): built into Postgres and PGlite, no extension.
    index("tasks_instruction_tsv_idx").using("gin", t.instructionTsv),
  ],
);

export const mergeStatusEnum = pgEnum("merge_status", MERGE_STATUSES);

export const groupMergeProposals = pgTable(
  "group_merge_proposals",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    poolId: uuid("pool_id")
      .notNull()
      .references(() => taskPools.id, { onDelete: "cascade" }),
    groupA: text("group_a").notNull(),
    groupB: text("group_b").notNull(),
    similarity: real("similarity").notNull(),
    taskA: text("task_a").notNull(),
    taskB: text("task_b").notNull(),
    pairs: integer("pairs").notNull(),
    status: mergeStatusEnum("status").notNull().default("pending"),
    decidedBy: uuid("decided_by").references(() => users.id, { onDelete: "set null" }),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("group_merge_pair_idx").on(t.poolId, t.groupA, t.groupB),
    index("group_merge_status_idx").on(t.poolId, t.status),
  ],
);

export const splitPartEnum = pgEnum("split_part", SPLIT_PARTS);

export type SplitCounts = Record<"train" | "dev" | "test", { tasks: number; groups: number }>;

export const splits = pgTable(
  "splits",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    poolId: uuid("pool_id")
      .notNull()
      .references(() => taskPools.id, { onDelete: "restrict" }),
    name: text("name").notNull(),
    seed: integer("seed").notNull(),
    devRatio: real("dev_ratio").notNull(),
    testRatio: real("test_ratio").notNull(),
    poolSnapshotHash: text("pool_snapshot_hash").notNull(),
    manifestHash: text("manifest_hash").notNull(),
    counts: jsonb("counts").$type<SplitCounts>().notNull(),
    leakage: jsonb("leakage").$type<LeakageReport>().notNull(),
    // The admission gate applied at creation (null: made before the gate existed).
    admission: jsonb("admission").$type<SplitAdmission>(),
    frozen: boolean("frozen").notNull().default(false),
    // The one column a frozen split may change (custom migration 0013 narrows the guard to it).
    archivedAt: timestamp("archived_at", { withTimezone: true }),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("splits_pool_idx").on(t.poolId, t.createdAt),
    uniqueIndex("splits_manifest_idx").on(t.poolId, t.manifestHash),
  ],
);

export const splitAssignments = pgTable(
  "split_assignments",
  {
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id, { onDelete: "restrict" }),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    taskId: text("task_id").notNull(),
    groupKey: text("group_key").notNull(),
    part: splitPartEnum("part").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.splitId, t.taskId] }),
    index("split_assignments_part_idx").on(t.splitId, t.part, t.taskId),
    index("split_assignments_group_idx").on(t.splitId, t.groupKey),
  ],
);
