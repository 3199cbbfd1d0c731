import { sql } from "drizzle-orm";
import {
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from "drizzle-orm/pg-core";
import type {
  BudgetCounters,
  EpisodeBudget,
  GradeResult,
  GradeVerdict,
  SnapshotManifest,
  StepRole,
} from "@agentlab/core";
import { jobs } from "./jobs";
import { splits, tasks } from "./tasks";

// Agentic repair episodes as data (architecture brief §11): content-addressed file contents,
// workspace trees and states shared by every episode that reaches them; one row per episode (a
// main run or a continuation from a stored state), its steps, and its branch points with their
// value estimate (the continuations' pass rate). A trigger (migration episodes) refuses an episode
// for training unless its task is in the train part of a frozen split, like sft_samples.

/** File contents and canonical tool results, by the sha256 of their text. */
export const episodeBlobs = pgTable("episode_blobs", {
  sha256: text("sha256").primaryKey(),
  content: text("content").notNull(),
});

/** A workspace tree: its (path, sha256) manifest, by tree hash. */
export const episodeSnapshots = pgTable("episode_snapshots", {
  treeHash: text("tree_hash").primaryKey(),
  manifest: jsonb("manifest").$type<SnapshotManifest>().notNull(),
});

/** A resumable state: tree, transcript up to t (its chained hash), budget counters, seed; by its hash. */
export const episodeStates = pgTable("episode_states", {
  hash: text("hash").primaryKey(),
  treeHash: text("tree_hash")
    .notNull()
    .references(() => episodeSnapshots.treeHash),
  t: integer("t").notNull(),
  transcriptHash: text("transcript_hash").notNull(),
  counters: jsonb("counters").$type<BudgetCounters>().notNull(),
  seed: integer("seed").notNull(),
});

export const episodes = pgTable(
  "episodes",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    jobId: uuid("job_id").references(() => jobs.id, { onDelete: "set null" }),
    /** 0: the job's main episode; i + 1: its continuation i. */
    ordinal: integer("ordinal").notNull(),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    taskKey: text("task_key").notNull(),
    policyName: text("policy_name").notNull(),
    policyHash: text("policy_hash").notNull(),
    seed: integer("seed").notNull(),
    budget: jsonb("budget").$type<EpisodeBudget>().notNull(),
    /** A continuation: the episode it branched from, the state it resumed and that state's branch row. */
    parentEpisodeId: uuid("parent_episode_id").references((): AnyPgColumn => episodes.id, { onDelete: "cascade" }),
    fromStateHash: text("from_state_hash").references(() => episodeStates.hash),
    branchId: uuid("branch_id").references((): AnyPgColumn => episodeBranches.id, { onDelete: "cascade" }),
    finalStateHash: text("final_state_hash")
      .notNull()
      .references(() => episodeStates.hash),
    verdict: text("verdict").$type<GradeVerdict>().notNull(),
    grade: jsonb("grade").$type<GradeResult>().notNull(),
    submittedBy: text("submitted_by").$type<"policy" | "budget">().notNull(),
    exhausted: text("exhausted"),
    turns: integer("turns").notNull(),
    testRuns: integer("test_runs").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("episodes_job_ordinal_idx").on(t.jobId, t.ordinal),
    index("episodes_task_idx").on(t.taskRowId, t.createdAt),
    index("episodes_parent_idx").on(t.parentEpisodeId),
    check("episodes_submitted_by", sql`${t.submittedBy} in ('policy', 'budget')`),
    // a stored episode has a verdict from the judge; an infra error is no episode
    check("episodes_verdict", sql`${t.verdict} <> 'infra_error'`),
    check("episodes_continuation", sql`(${t.parentEpisodeId} is null) = (${t.fromStateHash} is null)`),
  ],
);

export const episodeSteps = pgTable(
  "episode_steps",
  {
    episodeId: uuid("episode_id")
      .notNull()
      .references(() => episodes.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    role: text("role").$type<StepRole>().notNull(),
    tool: text("tool").notNull(),
    args: jsonb("args").$type<unknown>(),
    status: text("status").notNull(),
    refusal: text("refusal"),
    /** The canonical JSON of the tool result, in episode_blobs. */
    resultHash: text("result_hash")
      .notNull()
      .references(() => episodeBlobs.sha256),
    snapshotBefore: text("snapshot_before")
      .notNull()
      .references(() => episodeSnapshots.treeHash),
    snapshotAfter: text("snapshot_after")
      .notNull()
      .references(() => episodeSnapshots.treeHash),
    wallMs: doublePrecision("wall_ms").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.episodeId, t.index] }),
    check("episode_steps_role", sql`${t.role} in ('assistant', 'environment')`),
  ],
);

/** A branch point of an episode and its value estimate: the pass rate of the continuations run from it. */
export const episodeBranches = pgTable(
  "episode_branches",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    episodeId: uuid("episode_id")
      .notNull()
      .references((): AnyPgColumn => episodes.id, { onDelete: "cascade" }),
    stateHash: text("state_hash")
      .notNull()
      .references(() => episodeStates.hash),
    kind: text("kind").$type<"start" | "after_failed_tests">().notNull(),
    continuations: integer("continuations").notNull(),
    passes: integer("passes").notNull(),
    passRate: doublePrecision("pass_rate"),
  },
  (t) => [
    uniqueIndex("episode_branches_point_idx").on(t.episodeId, t.stateHash),
    check("episode_branches_kind", sql`${t.kind} in ('start', 'after_failed_tests')`),
    check("episode_branches_passes", sql`${t.passes} >= 0 and ${t.passes} <= ${t.continuations}`),
  ],
);

/** Every use of an episode for training; the trigger admits train-split episodes of a frozen split only. */
export const episodeTrainingUses = pgTable(
  "episode_training_uses",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    episodeId: uuid("episode_id")
      .notNull()
      .references(() => episodes.id, { onDelete: "restrict" }),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id),
    /** What consumes it (an SFT snapshot's or a pair set's key). */
    purpose: text("purpose").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("episode_training_uses_idx").on(t.episodeId, t.purpose)],
);
