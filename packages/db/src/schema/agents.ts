import { boolean, jsonb, pgTable, text, timestamp, uuid, integer } from "drizzle-orm/pg-core";
import type { Capabilities } from "@agentlab/core";
import { users } from "./users";

export const agents = pgTable("agents", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  credentialHash: text("credential_hash").notNull().unique(),
  // What the server holds the agent to (the claim matches on these, never on what a socket says):
  // labels and GPUs from the enrollment token and the agent's first report after enrolling, or set
  // by an admin; the shell-job opt-in only ever by an admin. Null GPUs: no report yet.
  labels: text("labels").array().notNull().default([]),
  shellJobs: boolean("shell_jobs").notNull().default(false),
  registeredGpus: integer("registered_gpus"),
  registeredGpuMemoryMb: integer("registered_gpu_memory_mb"),
  // The latest report, as the agent sent it (shown on the Agents page; not trusted for routing).
  capabilities: jsonb("capabilities").$type<Capabilities>(),
  // What the claim offers now: the registration capped by the latest report (a GPU gone missing).
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
  // The admin lets the agent enrolled with this token run shell jobs.
  shellJobs: boolean("shell_jobs").notNull().default(false),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  agentId: uuid("agent_id").references(() => agents.id, { onDelete: "set null" }),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
