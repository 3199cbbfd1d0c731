import { check, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { reports } from "./experiments";
import { studies } from "./studies";
import { users } from "./users";

// Read-only links for people outside the workspace: each opens exactly one experiment report or
// one study (its report and arms), never both; the token is shown once and only its hash stored.

export const shareLinks = pgTable(
  "share_links",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    reportId: uuid("report_id").references(() => reports.id, { onDelete: "cascade" }),
    studyId: uuid("study_id").references(() => studies.id, { onDelete: "cascade" }),
    /** sha256 of the token; the token itself is shown once and never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    label: text("label"),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("share_links_report_idx").on(t.reportId),
    index("share_links_study_idx").on(t.studyId),
    check("share_links_one_target", sql`(${t.reportId} is null) <> (${t.studyId} is null)`),
  ],
);
