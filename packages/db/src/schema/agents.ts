import { boolean, jsonb, pgTable, text, timestamp, uuid, integer } from "drizzle-orm/pg-core";
import type { Capabilities } from "@agentlab/core";
import { users } from "./users";

export const agents = pgTable("agents", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  credentialHash: text("credential_hash").notNull().unique(),
  labels: text("labels").array().notNull().default([]),
  capabilities: jsonb("capabilities").$type<Capabilities>(),
  // Denormalized from capabilities for the claim query.
  gpuCount: integer("gpu_count").notNull().default(0),
  gpuMemoryMb: integer("gpu_memory_mb").notNull().default(0),
  sandboxBackend: text("sandbox_backend"),
  sandboxOk: boolean("sandbox_ok").notNull().default(false),
  online: boolean("online").notNull().default(false),
  drain: boolean("drain").notNull().default(false),
  lastHeartbeatAt: timestamp("last_heartbeat_at", { withTimezone: true }),
  connectedAt: timestamp("connected_at", { withTimezone: true }),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const enrollmentTokens = pgTable("enrollment_tokens", {
  id: uuid("id").primaryKey().defaultRandom(),
  tokenHash: text("token_hash").notNull().unique(),
  name: text("name").notNull(),
  labels: text("labels").array().notNull().default([]),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  agentId: uuid("agent_id").references(() => agents.id, { onDelete: "set null" }),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
