import { z } from "zod";

// Job queue vocabulary shared by the control plane and the agent (architecture brief §4).
export const JobType = z.enum([
  "shell",
  "grade",
  "grade-batch",
  "audit",
  "train",
  "dpo",
  "grpo",
  "score",
  "generate",
  "tokenize",
  "inspect-model",
  "tiny-model",
  "episode",
]);
export type JobType = z.infer<typeof JobType>;

/** Job types that run untrusted code: only agents whose sandbox passed its self-test claim them. */
export const SANDBOXED_JOB_TYPES: readonly JobType[] = ["grade", "grade-batch", "audit", "episode", "grpo"];

// Vocabularies are `as const` tuples so that the database's pgEnum (packages/db) and the UI reuse
// the very same values; the zod enums are built from them.
export const JOB_STATES = ["queued", "running", "canceling", "succeeded", "failed", "canceled"] as const;
export const JobState = z.enum(JOB_STATES);
export type JobState = z.infer<typeof JobState>;

export const TERMINAL_STATES: readonly JobState[] = ["succeeded", "failed", "canceled"];
export const isTerminal = (s: JobState): boolean => TERMINAL_STATES.includes(s);

// Why an attempt ended. Retries follow the reason: only agent_lost and infra_error are retried.
export const TERMINAL_REASONS = [
  "succeeded",
  "user_error",
  "agent_lost",
  "canceled",
  "timeout",
  "infra_error",
] as const;
export const TerminalReason = z.enum(TERMINAL_REASONS);
export type TerminalReason = z.infer<typeof TerminalReason>;
export const RETRYABLE_REASONS: readonly TerminalReason[] = ["agent_lost", "infra_error"];

export const SandboxBackend = z.enum(["bwrap", "process"]);
export type SandboxBackend = z.infer<typeof SandboxBackend>;

/** A label names a kind of machine ("gpu-a100", "eu.west"): letters, digits, `.`, `_`, `-`, `:`. */
export const JobLabel = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "letters, digits and . _ - : only");

export const JobRequirements = z.object({
  labels: z.array(JobLabel).max(32).default([]),
  gpus: z.number().int().min(0).max(64).default(0),
  gpuMemoryMb: z.number().int().min(0).default(0),
  sandbox: SandboxBackend.optional(),
  /** A GPU job that may run beside other GPU jobs on the same agent; GPU jobs are exclusive without it. */
  gpuShare: z.boolean().optional(),
});
export type JobRequirements = z.infer<typeof JobRequirements>;

// Limits for one process tree run by the agent; shell jobs and the grader share them.
export const ProcessLimits = z.object({
  wallTimeoutS: z
    .number()
    .positive()
    .max(7 * 24 * 3600)
    .default(3600),
  cpuSeconds: z.number().int().positive().optional(),
  memoryMb: z.number().int().positive().optional(),
  maxOutputBytes: z
    .number()
    .int()
    .positive()
    .default(1 << 20),
});
export type ProcessLimits = z.infer<typeof ProcessLimits>;

export const ShellJobPayload = z.strictObject({
  argv: z.array(z.string()).min(1),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  limits: ProcessLimits.default({ wallTimeoutS: 3600, maxOutputBytes: 1 << 20 }),
});
export type ShellJobPayload = z.infer<typeof ShellJobPayload>;

// EnqueueJob (typed by job type) lives in contracts.ts, next to the payload schemas it joins.
