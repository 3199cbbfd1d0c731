import { z } from "zod";
import { GradingIsolation } from "./schemas";

// The agent ↔ grading-runner contract (apps/agent/src/sandbox/zygote.ts ↔ apps/agent/grader):
// one request per grade, `<length>\n<json>` on the runner's stdin, one JSON line back. The Node
// side parses every answer with RunnerResponse; anything else is a lost runner (infra_error).

const File = z.strictObject({ path: z.string(), content: z.string() });

export const RunnerLimits = z.strictObject({
  wallTimeoutS: z.number().positive(),
  testTimeoutS: z.number().positive(),
  cpuSeconds: z.number().int().positive(),
  memoryMb: z.number().int().positive(),
  pids: z.number().int().positive(),
  openFiles: z.number().int().positive(),
  tmpfsMb: z.number().int().positive(),
  maxOutputBytes: z.number().int().positive(),
});
export type RunnerLimits = z.infer<typeof RunnerLimits>;

export const RunnerRequest = z.strictObject({
  id: z.string(),
  /** The candidate's main files: the only code that runs in the candidate process. */
  candidate: z.array(File),
  /** The task's own main files: their top-level names decide what a star import brings in. */
  original: z.array(File),
  /** The task's other files (public context), present on both sides. */
  support: z.array(File),
  tests: z.array(File.extend({ layer: z.enum(["public", "hidden", "canary"]) })),
  limits: RunnerLimits,
  /** `judge`: tests and candidate in separate processes; `in_process`: the labelled weaker mode. */
  isolation: GradingIsolation,
  /** No memory cgroup: bound each process's address space instead. */
  addressSpaceLimit: z.boolean(),
  /**
   * A judge session: this request's candidate is the first of `session` candidates of one task
   * (same tests, support files, limits); each of the others follows as a RunnerCandidate, sent
   * after the previous one's answer. One answer line per candidate, in order; a RunnerSessionEnd
   * instead of a candidate ends it early. Absent: one grade.
   */
  session: z.number().int().min(1).max(64).optional(),
});
export type RunnerRequest = z.infer<typeof RunnerRequest>;

/** A further candidate of a judge session (RunnerRequest.session), framed like a request. */
export const RunnerCandidate = z.strictObject({ id: z.string(), candidate: z.array(File) });
export type RunnerCandidate = z.infer<typeof RunnerCandidate>;
/** Ends a judge session before its `session` candidates were sent (one kept open for the task's next grade). */
export const RunnerSessionEnd = z.strictObject({ end: z.literal(true) });
export type RunnerSessionEnd = z.infer<typeof RunnerSessionEnd>;

export const RunnerTest = z.object({
  id: z.string(),
  layer: z.string(),
  outcome: z.string(),
  message: z.string().default(""),
});
export type RunnerTest = z.infer<typeof RunnerTest>;

/** What the judge saw of the candidate process: timeout, exited, protocol, resource_limit. */
export const RunnerEvent = z.object({ kind: z.string(), test: z.string(), detail: z.string() });
export type RunnerEvent = z.infer<typeof RunnerEvent>;

export const RunnerResponse = z.object({
  id: z.string().default(""),
  syntax_errors: z.array(z.string()).default([]),
  limit: z.enum(["timeout", "resource_limit"]).nullable().default(null),
  limit_detail: z.string().default(""),
  infra_error: z.string().nullable().default(null),
  runner_lost: z.boolean().default(false),
  exit_code: z.number().int().nullable().default(null),
  signal: z.string().nullable().default(null),
  junit: z.array(RunnerTest).nullable().default(null),
  plugin: z.array(RunnerTest).nullable().default(null),
  events: z.array(RunnerEvent).default([]),
  stdout: z.string().default(""),
  candidate_output: z.string().default(""),
  candidate_restarts: z.number().int().default(0),
  /** The candidate's judge process ran pytest's collection itself, or was forked from a session's template that had. */
  judge_start: z.enum(["collected", "forked"]).nullable().default(null),
  /** The candidate process imported the task's support modules itself, or was forked from a session's candidate template that had. */
  candidate_start: z.enum(["imported", "forked"]).nullable().default(null),
  output_truncated: z.boolean().default(false),
  wall_ms: z.number().default(0),
  cpu_ms: z.number().nullable().default(null),
  maxrss_kb: z.number().nullable().default(null),
  isolation: GradingIsolation.optional(),
});
export type RunnerResponse = z.infer<typeof RunnerResponse>;
