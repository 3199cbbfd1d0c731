import { z } from "zod";
import { Capabilities } from "./capabilities";
import { JobType, TerminalReason } from "../jobs/schemas";

// Agent <-> server messages over socket.io (architecture brief §4). Both ends parse on receipt.
// Every request is acknowledged; the agent retries until it gets an ack, so handlers are idempotent.
export const PROTOCOL_VERSION = 1 as const;
/** The artifact kinds a claim hands back to a retried job, and at most how many (the newest). */
export const RESUMABLE_ARTIFACT_KINDS = ["adapter", "trainer_state"] as const;
export const RESUME_ARTIFACTS_MAX = 64;
const v = z.literal(PROTOCOL_VERSION);

export const AttemptRef = z.object({ jobId: z.string().uuid(), attemptId: z.string().uuid() });
export type AttemptRef = z.infer<typeof AttemptRef>;

export const HelloMsg = z.object({ version: v, capabilities: Capabilities, drain: z.boolean().default(false) });
export type HelloMsg = z.infer<typeof HelloMsg>;
export const HelloAck = z.object({
  agentId: z.string().uuid(),
  heartbeatIntervalMs: z.number().int(),
  leaseTtlMs: z.number().int(),
});
export type HelloAck = z.infer<typeof HelloAck>;

export const ClaimMsg = z.object({ version: v });
/** An artifact an earlier attempt of the same job uploaded (a lost training run resumes from them). */
export const EarlierArtifact = z.object({
  name: z.string(),
  kind: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  meta: z.record(z.string(), z.unknown()),
});
export type EarlierArtifact = z.infer<typeof EarlierArtifact>;
export const ClaimedJob = AttemptRef.extend({
  type: JobType,
  payload: z.record(z.string(), z.unknown()),
  maxDurationS: z.number().int().positive(),
  attempt: z.number().int().positive(),
  /** Only the kinds a job can resume from (RESUMABLE_ARTIFACT_KINDS), newest last. */
  earlierArtifacts: z.array(EarlierArtifact).max(RESUME_ARTIFACTS_MAX).default([]),
});
export type ClaimedJob = z.infer<typeof ClaimedJob>;
export const ClaimAck = z.object({ job: ClaimedJob.nullable() });
export type ClaimAck = z.infer<typeof ClaimAck>;

// Sent by the agent's supervisor, never by a job process.
export const HeartbeatMsg = z.object({
  version: v,
  attempts: z.array(AttemptRef).max(64),
  drain: z.boolean().default(false),
});
export type HeartbeatMsg = z.infer<typeof HeartbeatMsg>;
// `stale`: attempts the server no longer honours (stop them, drop their output).
// `cancel`: attempts whose job a user asked to cancel.
export const HeartbeatAck = z.object({
  stale: z.array(z.string().uuid()),
  cancel: z.array(z.string().uuid()),
  leaseTtlMs: z.number().int(),
});
export type HeartbeatAck = z.infer<typeof HeartbeatAck>;

export const LogChunk = z.object({
  seq: z.number().int().nonnegative(),
  stream: z.enum(["stdout", "stderr", "system"]),
  data: z.string().max(256 * 1024),
});
export type LogChunk = z.infer<typeof LogChunk>;
export const LogMsg = AttemptRef.extend({ version: v, chunks: z.array(LogChunk).min(1).max(256) });
export type LogMsg = z.infer<typeof LogMsg>;

export const ProgressMsg = AttemptRef.extend({
  version: v,
  seq: z.number().int().nonnegative(),
  data: z.record(z.string(), z.unknown()),
});
export type ProgressMsg = z.infer<typeof ProgressMsg>;

export const ResultMsg = AttemptRef.extend({
  version: v,
  reason: TerminalReason,
  exitCode: z.number().int().nullable().default(null),
  signal: z.string().nullable().default(null),
  result: z.record(z.string(), z.unknown()).default({}),
  error: z
    .string()
    .max(64 * 1024)
    .nullable()
    .default(null),
  lastLogSeq: z.number().int().min(-1).default(-1),
  // Saves a round trip per job: the ack carries the agent's next job, claimed on its behalf.
  claimNext: z.boolean().default(false),
});
export type ResultMsg = z.infer<typeof ResultMsg>;

// An uploaded content-addressed blob (see /api/artifacts) linked to the attempt that made it.
export const ArtifactMsg = AttemptRef.extend({
  version: v,
  name: z.string().min(1).max(300),
  kind: z.string().min(1).max(64),
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  meta: z.record(z.string(), z.unknown()).default({}),
});
export type ArtifactMsg = z.infer<typeof ArtifactMsg>;

// Written on behalf of an attempt: `accepted: false` means the attempt is stale and must stop.
// `refused`: the write broke its job's contract (jobs/receipt.ts), and why; a refused progress event
// also ends the attempt, a refused success is stored as the attempt's infra_error.
export const WriteAck = z.object({
  accepted: z.boolean(),
  next: ClaimedJob.nullable().optional(),
  refused: z.string().optional(),
});
export type WriteAck = z.infer<typeof WriteAck>;

/** The server's cancel push names the attempt and nothing else. @alias */
export const CancelPush = AttemptRef;
export type CancelPush = z.infer<typeof CancelPush>;

// Every acknowledgement: `data` is then parsed with the request's own reply schema.
export const AckEnvelope = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
]);
export type AckEnvelope = z.infer<typeof AckEnvelope>;

export const AGENT_EVENTS = {
  hello: "hello",
  claim: "claim",
  heartbeat: "heartbeat",
  log: "log",
  progress: "progress",
  result: "result",
  artifact: "artifact",
  jobsAvailable: "jobs_available",
  cancel: "cancel",
  revoked: "revoked",
  /** Server → agent: run the sandbox self-test again and say hello with the new capabilities. */
  selftest: "selftest",
  /** Agent → server: a teacher policy's next turn in an episode job (protocol/teacher-turn.ts). */
  teacherTurn: "teacher_turn",
} as const;

// The agent's stored identity (agent.json, mode 0600), written by `enroll` or by the server for its local agent.
export const AgentConfig = z.object({
  server: z.string().url(),
  agentId: z.string().uuid(),
  credential: z.string().min(10),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

export const EnrollRequest = z.object({
  token: z.string().min(10).max(200),
  name: z.string().min(1).max(100).optional(),
});
export type EnrollRequest = z.infer<typeof EnrollRequest>;
export const EnrollReply = z.object({ agentId: z.string().uuid(), credential: z.string() });
export type EnrollReply = z.infer<typeof EnrollReply>;
