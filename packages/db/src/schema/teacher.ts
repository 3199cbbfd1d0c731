import {
  boolean,
  check,
  doublePrecision,
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
  COLLECTION_STATES,
  SNAPSHOT_QUALITIES,
  NAME_MAX_LENGTH,
  PROVIDER_KINDS,
  REPLAY_STATES,
  type CandidateFile,
  type SftMessage,
  type GradeResult,
  type SamplingParams,
  type TeacherReply,
} from "@agentlab/core";
import { users } from "./users";
import { splits, tasks } from "./tasks";
import { jobs } from "./jobs";
import { episodes } from "./episodes";

// Teacher providers, candidates (a cache keyed by what determines an answer), collections, the
// budget ledger, and immutable SFT dataset snapshots (docs/teacher.md).

export const providerKindEnum = pgEnum("provider_kind", PROVIDER_KINDS);

export const teacherProviders = pgTable("teacher_providers", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  kind: providerKindEnum("kind").notNull(),
  baseUrl: text("base_url"),
  model: text("model").notNull(),
  // AES-GCM sealed by the server's secret box; never selected by list/byId queries.
  apiKeySealed: text("api_key_sealed"),
  extraParams: jsonb("extra_params").$type<Record<string, unknown>>().notNull().default({}),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  // Hidden from lists and pickers by default (archive/restore); nothing else about the row changes.
  archivedAt: timestamp("archived_at", { withTimezone: true }),
});

// USD per million tokens, per model; edited by the user.
export const teacherPrices = pgTable("teacher_prices", {
  model: text("model").primaryKey(),
  inputPerMTok: doublePrecision("input_per_mtok").notNull(),
  outputPerMTok: doublePrecision("output_per_mtok").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const collectionStateEnum = pgEnum("collection_state", COLLECTION_STATES);

export const teacherCollections = pgTable(
  "teacher_collections",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    // Experiments are another issue's table; kept as a plain id so a collection can stand alone.
    experimentId: uuid("experiment_id"),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id, { onDelete: "restrict" }),
    providerId: uuid("provider_id")
      .notNull()
      .references(() => teacherProviders.id, { onDelete: "restrict" }),
    providerKind: providerKindEnum("provider_kind").notNull(),
    model: text("model").notNull(),
    parts: text("parts").array().notNull(),
    taskIds: text("task_ids").array(),
    nSamples: integer("n_samples").notNull(),
    params: jsonb("params").$type<SamplingParams>().notNull(),
    paramsHash: text("params_hash").notNull(),
    promptHash: text("prompt_hash").notNull(),
    concurrency: integer("concurrency").notNull(),
    budgetUsd: doublePrecision("budget_usd"),
    maxRetries: integer("max_retries").notNull(),
    timeoutMs: integer("timeout_ms").notNull(),
    grade: boolean("grade").notNull().default(true),
    state: collectionStateEnum("state").notNull().default("queued"),
    stopReason: text("stop_reason"),
    tasksTotal: integer("tasks_total").notNull().default(0),
    samplesTotal: integer("samples_total").notNull().default(0),
    samplesDone: integer("samples_done").notNull().default(0),
    samplesFailed: integer("samples_failed").notNull().default(0),
    reused: integer("reused").notNull().default(0),
    costSavedUsd: doublePrecision("cost_saved_usd").notNull().default(0),
    tokensIn: integer("tokens_in").notNull().default(0),
    tokensOut: integer("tokens_out").notNull().default(0),
    costUsd: doublePrecision("cost_usd").notNull().default(0),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("teacher_collections_experiment_idx").on(t.experimentId),
    index("teacher_collections_created_idx").on(t.createdAt),
    // The same limit as the forms and zod (NAME_MAX_LENGTH): what one layer accepts another never refuses.
    check("teacher_collections_name_length", sql`char_length(${t.name}) <= ${sql.raw(String(NAME_MAX_LENGTH))}`),
  ],
);

export const teacherCandidates = pgTable(
  "teacher_candidates",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    cacheKey: text("cache_key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    promptHash: text("prompt_hash").notNull(),
    model: text("model").notNull(),
    paramsHash: text("params_hash").notNull(),
    sampleIndex: integer("sample_index").notNull(),
    providerKind: providerKindEnum("provider_kind").notNull(),
    // True for the reference provider's answers: the task's own solution, not a model's.
    oracle: boolean("oracle").notNull(),
    // The task the answer was first asked for; others with the same fingerprint reuse it.
    originTaskRowId: uuid("origin_task_row_id").references(() => tasks.id, { onDelete: "set null" }),
    answer: text("answer").notNull(),
    files: jsonb("files").$type<CandidateFile[]>(),
    parseError: text("parse_error"),
    finishReason: text("finish_reason"),
    tokensIn: integer("tokens_in").notNull().default(0),
    tokensOut: integer("tokens_out").notNull().default(0),
    costUsd: doublePrecision("cost_usd").notNull().default(0),
    latencyMs: integer("latency_ms").notNull().default(0),
    verdict: text("verdict"),
    verdictReasons: text("verdict_reasons").array(),
    gradeResult: jsonb("grade_result").$type<GradeResult>(),
    gradeJobId: uuid("grade_job_id").references(() => jobs.id, { onDelete: "set null" }),
    gradedAt: timestamp("graded_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("teacher_candidates_key_idx").on(t.cacheKey),
    index("teacher_candidates_fp_idx").on(t.fingerprint),
    index("teacher_candidates_job_idx").on(t.gradeJobId),
  ],
);

// Which candidate answered which (task, sample) of a collection, and whether it came from the cache.
export const teacherCollectionItems = pgTable(
  "teacher_collection_items",
  {
    collectionId: uuid("collection_id")
      .notNull()
      .references(() => teacherCollections.id, { onDelete: "cascade" }),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    sampleIndex: integer("sample_index").notNull(),
    candidateId: uuid("candidate_id")
      .notNull()
      .references(() => teacherCandidates.id, { onDelete: "restrict" }),
    reused: boolean("reused").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.collectionId, t.taskRowId, t.sampleIndex] }),
    index("teacher_items_candidate_idx").on(t.candidateId),
  ],
);

// One row per provider call (failed calls included when the provider reported usage).
export const teacherLedger = pgTable(
  "teacher_ledger",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    providerId: uuid("provider_id").references(() => teacherProviders.id, { onDelete: "set null" }),
    model: text("model").notNull(),
    experimentId: uuid("experiment_id"),
    collectionId: uuid("collection_id").references(() => teacherCollections.id, { onDelete: "set null" }),
    candidateId: uuid("candidate_id").references(() => teacherCandidates.id, { onDelete: "set null" }),
    // An episode job whose teacher policy made the call (one line per turn asked of the provider).
    jobId: uuid("job_id").references(() => jobs.id, { onDelete: "set null" }),
    tokensIn: integer("tokens_in").notNull(),
    tokensOut: integer("tokens_out").notNull(),
    costUsd: doublePrecision("cost_usd").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("teacher_ledger_provider_idx").on(t.providerId),
    index("teacher_ledger_experiment_idx").on(t.experimentId),
    index("teacher_ledger_collection_idx").on(t.collectionId),
    index("teacher_ledger_job_idx").on(t.jobId),
  ],
);

// A teacher policy's turns in episodes, by what determines them (provider, model, sampling, the
// prompt and tools, the history, the seed): a request sent again (an ack lost) or a retried
// attempt replaying the same history is answered from here, free, like the candidate cache.
export const teacherTurns = pgTable("teacher_turns", {
  cacheKey: text("cache_key").primaryKey(),
  providerId: uuid("provider_id").references(() => teacherProviders.id, { onDelete: "set null" }),
  model: text("model").notNull(),
  /** The job that first asked (provenance only: the cache serves any job asking the same). */
  jobId: uuid("job_id").references(() => jobs.id, { onDelete: "set null" }),
  reply: jsonb("reply").$type<TeacherReply>().notNull(),
  tokensIn: integer("tokens_in").notNull(),
  tokensOut: integer("tokens_out").notNull(),
  costUsd: doublePrecision("cost_usd").notNull(),
  latencyMs: integer("latency_ms").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export type TokenCounts = {
  model: string;
  supervisedTokens: number;
  totalTokens: number;
  maxTokens: number;
  chatTemplateSha256: string;
  /** Supervised tokens of each sample, in line order (the budget operation draws by them). */
  perSample?: number[];
  /** Each sample's full length in tokens before any truncation, in line order. */
  sampleTokens?: number[];
  /** Samples longer than the max length they were measured against (dropped before training). */
  overLength?: { maxLength: number; count: number; taskIds: string[] };
};

// Immutable once written (samples, hash, counts); only the supervised-token counts are filled later.
export const sftDatasets = pgTable(
  "sft_datasets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    hash: text("hash").notNull(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id, { onDelete: "restrict" }),
    experimentId: uuid("experiment_id"),
    sourceCollectionIds: uuid("source_collection_ids").array().notNull(),
    // Set for a replay's result: the snapshot it was re-graded from.
    parentId: uuid("parent_id"),
    promptHash: text("prompt_hash").notNull(),
    sampleCount: integer("sample_count").notNull(),
    taskCount: integer("task_count").notNull(),
    // Count of samples that come from the reference provider (an oracle, not a teacher).
    oracleSamples: integer("oracle_samples").notNull().default(0),
    // What an answer had to be to get in (core teacher/quality.ts); children inherit it.
    quality: text("quality", { enum: SNAPSHOT_QUALITIES }).notNull().default("verified"),
    tokenCounts: jsonb("token_counts").$type<TokenCounts>(),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    // The one column besides token_counts that the immutability trigger lets change (custom migration 0013).
    archivedAt: timestamp("archived_at", { withTimezone: true }),
  },
  (t) => [
    index("sft_datasets_hash_idx").on(t.hash),
    check("sft_datasets_name_length", sql`char_length(${t.name}) <= ${sql.raw(String(NAME_MAX_LENGTH))}`),
    check(
      "sft_datasets_quality",
      sql`${t.quality} in (${sql.raw(SNAPSHOT_QUALITIES.map((q) => `'${q}'`).join(", "))})`,
    ),
  ],
);

export const sftSamples = pgTable(
  "sft_samples",
  {
    datasetId: uuid("dataset_id")
      .notNull()
      .references(() => sftDatasets.id, { onDelete: "cascade" }),
    ordinal: integer("ordinal").notNull(),
    hash: text("hash").notNull(),
    // A sample is a teacher's verified answer (candidate) or a verified episode trajectory, never both.
    candidateId: uuid("candidate_id").references(() => teacherCandidates.id, { onDelete: "restrict" }),
    episodeId: uuid("episode_id").references(() => episodes.id, { onDelete: "restrict" }),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    taskKey: text("task_key").notNull(),
    oracle: boolean("oracle").notNull(),
    messages: jsonb("messages").$type<SftMessage[]>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.datasetId, t.ordinal] }),
    index("sft_samples_candidate_idx").on(t.candidateId),
    index("sft_samples_episode_idx").on(t.episodeId),
    check("sft_samples_one_source", sql`(${t.candidateId} is null) <> (${t.episodeId} is null)`),
  ],
);

export const replayStateEnum = pgEnum("replay_state", REPLAY_STATES);

// A replay re-grades every sample of a snapshot; the survivors form a new snapshot (or the same one when all pass).
export const sftReplays = pgTable("sft_replays", {
  id: uuid("id").primaryKey().defaultRandom(),
  datasetId: uuid("dataset_id")
    .notNull()
    .references(() => sftDatasets.id, { onDelete: "cascade" }),
  state: replayStateEnum("state").notNull().default("grading"),
  // sample ordinal → grade job id
  jobs: jsonb("jobs").$type<Record<string, string>>().notNull(),
  kept: integer("kept"),
  dropped: jsonb("dropped").$type<{ ordinal: number; taskKey: string; verdict: string; reasons: string[] }[]>(),
  resultDatasetId: uuid("result_dataset_id").references(() => sftDatasets.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  finishedAt: timestamp("finished_at", { withTimezone: true }),
});
