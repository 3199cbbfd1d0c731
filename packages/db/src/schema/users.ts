import { pgTable, text, timestamp, uuid, pgEnum, index } from "drizzle-orm/pg-core";
import { ROLES, SETUP_TOKEN_KINDS } from "@agentlab/core";

// Vocabularies come from core (one definition for the database, the API and the UI).
export const roleEnum = pgEnum("role", ROLES);
export const setupTokenKindEnum = pgEnum("setup_token_kind", SETUP_TOKEN_KINDS);

// One team, one workspace: a user's role applies to everything in the lab (see docs/security.md).
export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  // "scrypt$N$r$p$salt$hash": the KDF parameters travel with the hash so they can be raised later.
  passwordHash: text("password_hash").notNull(),
  role: roleEnum("role").notNull().default("member"),
  passwordChangedAt: timestamp("password_changed_at", { withTimezone: true }).notNull().defaultNow(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

// Browser sessions: only the sha256 of the cookie value is stored.
export const sessions = pgTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

// Personal API tokens for the `agentlab` CLI: shown once, stored hashed.
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    // The first characters of the value, so a user can tell tokens apart without the secret.
    prefix: text("prefix").notNull().default(""),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("api_tokens_user_idx").on(t.userId)],
);

// One-time links: first-admin setup and invitations.
export const setupTokens = pgTable("setup_tokens", {
  tokenHash: text("token_hash").primaryKey(),
  id: uuid("id").notNull().unique().defaultRandom(),
  kind: setupTokenKindEnum("kind").notNull().default("invite"),
  role: roleEnum("role").notNull(),
  // An invitation may be addressed to one email; null lets the invitee choose.
  email: text("email"),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  usedBy: uuid("used_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

// Login rate limits, shared by every web instance: one row per bucket ("ip:…",
// "account:…"), as a GCRA "theoretical arrival time": the bucket is full when tat <= now(), empty
// when tat >= now() + capacity × interval. One timestamp per key, updated in one atomic upsert.
export const rateLimits = pgTable(
  "rate_limits",
  {
    key: text("key").primaryKey(),
    tat: timestamp("tat", { withTimezone: true }).notNull(),
  },
  (t) => [index("rate_limits_tat_idx").on(t.tat)],
);
