import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import {
  GENERATION_SPLITS,
  EXPERIMENT_STATES,
  GENERATION_GRADE_STATES,
  NAME_MAX_LENGTH,
  STAGE_STATES,
  type ExperimentConfig,
  type ExperimentReport,
  type ModelRef,
  type SelectionDecision,
  type StageKind,
  type StageOutput,
} from "@agentlab/core";
import { splits } from "./tasks";
import { users } from "./users";

// Experiments (brief §2): the recipe, its stage records (all runner state lives here so that a
// restart resumes), per-task evaluations, the dev selection, the once-only test run, the report
// and its share links.

export const experimentStateEnum = pgEnum("experiment_state", EXPERIMENT_STATES);
export const stageStateEnum = pgEnum("experiment_stage_state", STAGE_STATES);
// dev and test are evaluated; train holds the sampled answers of preference pairs, which
// no report compares and no selection reads (both ask for their split by name).
export const evalSplitEnum = pgEnum("evaluation_split", GENERATION_SPLITS);

export const experiments = pgTable(
  "experiments",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id),
    config: jsonb("config").$type<ExperimentConfig>().notNull(),
    state: experimentStateEnum("state").notNull().default("running"),
    error: text("error"),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** Free labels and notes for the runs table; they annotate, never change, the recorded run. */
    tags: text("tags").array().notNull().default([]),
    notes: text("notes").notNull().default(""),
    /** Hidden from the runs table by default; the experiment, its jobs and report stay intact. */
    archivedAt: timestamp("archived_at", { withTimezone: true }),
  },
  // The same limit as the form and ExperimentConfig (NAME_MAX_LENGTH).
  (t) => [
    index("experiments_state_idx").on(t.state),
    check("experiments_name_length", sql`char_length(${t.name}) <= ${sql.raw(String(NAME_MAX_LENGTH))}`),
  ],
);

export const experimentStages = pgTable(
  "experiment_stages",
  {
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    kind: text("kind").$type<StageKind>().notNull(),
    state: stageStateEnum("state").notNull().default("pending"),
    jobIds: uuid("job_ids").array().notNull().default([]),
    output: jsonb("output").$type<StageOutput>().notNull().default({}),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.key] })],
);

export const evaluations = pgTable(
  "evaluations",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    split: evalSplitEnum("split").notNull(),
    /** "base" or "s<seed>e<epoch>" (core modelKey). */
    modelKey: text("model_key").notNull(),
    taskId: text("task_id").notNull(),
    /** Which of the task's n answers (0 for a one-answer evaluation) and the seed it was sampled with. */
    sampleIndex: integer("sample_index").notNull().default(0),
    seed: integer("seed"),
    sourceGroup: text("source_group").notNull(),
    verdict: text("verdict").notNull(),
    answer: text("answer").notNull(),
    grade: jsonb("grade").$type<Record<string, unknown>>().notNull().default({}),
    protocol: jsonb("protocol").$type<Record<string, unknown>>().notNull(),
    generateJobId: uuid("generate_job_id"),
    gradeJobId: uuid("grade_job_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("evaluations_unique_idx").on(t.experimentId, t.split, t.modelKey, t.taskId, t.sampleIndex)],
);

export const selectionDecisions = pgTable("selection_decisions", {
  // One decision per experiment: the primary key makes a second one impossible.
  experimentId: uuid("experiment_id")
    .primaryKey()
    .references(() => experiments.id, { onDelete: "cascade" }),
  decision: jsonb("decision").$type<SelectionDecision>().notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const testRuns = pgTable("experiment_test_runs", {
  // The test evaluation runs once: claiming it inserts this row, and a second insert is refused.
  experimentId: uuid("experiment_id")
    .primaryKey()
    .references(() => experiments.id, { onDelete: "cascade" }),
  models: jsonb("models").$type<ModelRef[]>().notNull(),
  startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
});

export const reports = pgTable("reports", {
  id: uuid("id").primaryKey().defaultRandom(),
  experimentId: uuid("experiment_id")
    .notNull()
    .unique()
    .references(() => experiments.id, { onDelete: "cascade" }),
  body: jsonb("body").$type<ExperimentReport>().notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const gradeStateEnum = pgEnum("generation_grade_state", GENERATION_GRADE_STATES);

// Every generated answer, stored when its generate job succeeds (not only inside the job's
// result), so re-grading never needs a second generation. A test-split row can only be written
// once the experiment's test run is claimed (trigger in migration `experiment_protocol`).
export const generations = pgTable(
  "experiment_generations",
  {
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    split: evalSplitEnum("split").notNull(),
    modelKey: text("model_key").notNull(),
    taskId: text("task_id").notNull(),
    /** Which of the task's n answers (0 for a one-answer evaluation) and its sampling seed (null: greedy). */
    sampleIndex: integer("sample_index").notNull().default(0),
    seed: integer("seed"),
    /**
     * sha256 of what decides this answer before it is generated (task fingerprint, model and
     * adapter, recipe protocol, sample index): a later evaluation with the same key reuses it
     * instead of generating again (core generationCacheKey).
     */
    cacheKey: text("cache_key"),
    sourceGroup: text("source_group").notNull(),
    text: text("text").notNull(),
    parsed: boolean("parsed").notNull(),
    /** The generation protocol actually used (core RecordedProtocol less the grader version). */
    protocol: jsonb("protocol").$type<Record<string, unknown>>().notNull(),
    generateJobId: uuid("generate_job_id").notNull(),
    /** Grade jobs tried for this answer, oldest first; bounded by the runner's retry limit. */
    gradeJobIds: uuid("grade_job_ids").array().notNull().default([]),
    gradeState: gradeStateEnum("grade_state").notNull().default("pending"),
    /** Why no verdict was obtained (the last grade job's error), when grade_state is no_verdict. */
    gradeError: text("grade_error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.experimentId, t.split, t.modelKey, t.taskId, t.sampleIndex] }),
    index("experiment_generations_state_idx").on(t.experimentId, t.split, t.gradeState),
    index("experiment_generations_cache_idx").on(t.cacheKey),
  ],
);
