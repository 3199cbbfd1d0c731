import {
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
import { NAME_MAX_LENGTH, type ArmRole, type ModelRef, type StudyDefinition, type StudyReport } from "@agentlab/core";
import { experiments } from "./experiments";
import { splits } from "./tasks";
import { splitTestClaims } from "./test-reads";
import { users } from "./users";

// Studies (brief §11): arms that are experiments sharing split, base, protocol and seeds, frozen on
// dev before ONE test claim in the split's ledger covers them all. The claim is the study's, once:
// `test_claim_id` is written once (trigger, migration studies) under the study row's lock.

export const STUDY_STATES = ["running", "succeeded", "failed"] as const;
export const studyStateEnum = pgEnum("study_state", STUDY_STATES);

export const studies = pgTable(
  "studies",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id),
    /** The definition as created (parsed, defaults filled). */
    definition: jsonb("definition").$type<StudyDefinition>().notNull(),
    state: studyStateEnum("state").notNull().default("running"),
    error: text("error"),
    /** The study's one entry in the split's test-read ledger. */
    testClaimId: uuid("test_claim_id").references(() => splitTestClaims.id),
    report: jsonb("report").$type<StudyReport>(),
    reportAt: timestamp("report_at", { withTimezone: true }),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("studies_split_idx").on(t.splitId),
    uniqueIndex("studies_test_claim_idx").on(t.testClaimId),
    check("studies_name_length", sql`char_length(${t.name}) <= ${sql.raw(String(NAME_MAX_LENGTH))}`),
  ],
);

/** One arm = one experiment; its test models are fixed by the study's claim. */
export const studyArms = pgTable(
  "study_arms",
  {
    studyId: uuid("study_id")
      .notNull()
      .references(() => studies.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    ordinal: integer("ordinal").notNull(),
    role: text("role").$type<ArmRole>().notNull(),
    factor: text("factor"),
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id),
    /** The models this arm evaluates on test, recorded with the study's claim (null before it). */
    testModels: jsonb("test_models").$type<ModelRef[]>(),
  },
  (t) => [primaryKey({ columns: [t.studyId, t.name] }), uniqueIndex("study_arms_experiment_idx").on(t.experimentId)],
);
