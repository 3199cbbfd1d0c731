import { index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { experiments } from "./experiments";
import { splits } from "./tasks";
import { users } from "./users";

// The test-read ledger (brief §11): every claim of a split's test part, by an experiment now (a
// study later), kept on the split whatever happens to the claimer; and the split's "final" mark,
// after which a claim needs an admin's override with a reason. Kept apart from `splits`, which a
// frozen-split trigger keeps unchanged. The ledger is append-only (trigger, migration test_reads).

export const splitTestClaims = pgTable(
  "split_test_claims",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id, { onDelete: "cascade" }),
    /** Null once the experiment is deleted: the read still happened. */
    experimentId: uuid("experiment_id").references(() => experiments.id, { onDelete: "set null" }),
    studyId: text("study_id"),
    /** What the claimer was called and its recipe's hash, as they were at the claim. */
    claimerName: text("claimer_name").notNull(),
    recipeHash: text("recipe_hash").notNull(),
    /** Labels of the models the test evaluation compares. */
    models: jsonb("models").$type<string[]>().notNull(),
    claimedBy: uuid("claimed_by").references(() => users.id, { onDelete: "set null" }),
    claimedByName: text("claimed_by_name"),
    claimedAt: timestamp("claimed_at", { withTimezone: true }).notNull().defaultNow(),
    /** Set when the split was final: the admin's reason for reading it again. */
    overrideReason: text("override_reason"),
    overrideBy: uuid("override_by").references(() => users.id, { onDelete: "set null" }),
    overrideByName: text("override_by_name"),
  },
  (t) => [
    index("split_test_claims_split_idx").on(t.splitId, t.claimedAt),
    uniqueIndex("split_test_claims_experiment_idx").on(t.experimentId).where(sql`${t.experimentId} is not null`),
  ],
);

export const splitFinals = pgTable("split_finals", {
  splitId: uuid("split_id")
    .primaryKey()
    .references(() => splits.id, { onDelete: "cascade" }),
  markedBy: uuid("marked_by").references(() => users.id, { onDelete: "set null" }),
  markedByName: text("marked_by_name"),
  note: text("note").notNull().default(""),
  markedAt: timestamp("marked_at", { withTimezone: true }).notNull().defaultNow(),
});

/** An admin's leave for one experiment to read a final split's test part, with the reason. */
export const splitTestOverrides = pgTable(
  "split_test_overrides",
  {
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id, { onDelete: "cascade" }),
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    reason: text("reason").notNull(),
    grantedBy: uuid("granted_by").references(() => users.id, { onDelete: "set null" }),
    grantedByName: text("granted_by_name"),
    grantedAt: timestamp("granted_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.splitId, t.experimentId] })],
);
