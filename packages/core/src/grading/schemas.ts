import { z } from "zod";
import { SandboxBackend } from "../jobs/schemas";
import { taskFingerprint } from "../tasks/fingerprint";
import { TaskSpec, TaskTestFile } from "../tasks/spec";

// Grading vocabulary (architecture brief §5). These cross the agent ↔ server boundary as job
// payloads/results and are stored with every graded candidate.

/** Recorded with every grade; bump it when the protocol, runner or pinned pytest changes. */
export const GRADER_VERSION = "agentlab-grader/2 judge pytest-8.3.4";

/**
 * How a task is graded. `judge`: the tests and pytest run in a judge process and the candidate's
 * module in a separate sandboxed process, reached over a by-value channel (docs/grading.md).
 * `in_process`: the candidate's module is imported into the pytest process; the weaker mode,
 * only for tasks whose tests need the candidate's objects themselves (found at audit time), and
 * labelled on every verdict and report.
 */
export const GRADING_ISOLATIONS = ["judge", "in_process"] as const;
export const GradingIsolation = z.enum(GRADING_ISOLATIONS);
export type GradingIsolation = z.infer<typeof GradingIsolation>;

export const GradeVerdict = z.enum([
  "pass",
  "fail_syntax",
  "fail_public",
  "fail_hidden",
  "timeout",
  "resource_limit",
  "tampered",
  "infra_error",
]);
export type GradeVerdict = z.infer<typeof GradeVerdict>;

export const TestLayer = z.enum(["public", "hidden", "canary"]);
export type TestLayer = z.infer<typeof TestLayer>;

export const TestOutcomeKind = z.enum(["passed", "failed", "error", "skipped"]);
export type TestOutcomeKind = z.infer<typeof TestOutcomeKind>;

export const TestOutcome = z.object({
  id: z.string(),
  layer: TestLayer,
  outcome: TestOutcomeKind,
  message: z.string().default(""),
});
export type TestOutcome = z.infer<typeof TestOutcome>;

export const GradeLimits = z.object({
  wallTimeoutS: z.number().positive().max(600).default(10),
  /** Time one test (or one module import) may wait on the candidate before it fails as a timeout. */
  testTimeoutS: z.number().positive().max(600).default(3),
  cpuSeconds: z.number().int().positive().max(600).default(10),
  memoryMb: z.number().int().min(32).max(16384).default(512),
  maxOutputBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 << 20)
    .default(64 << 10),
  tmpfsMb: z.number().int().min(1).max(4096).default(64),
  pids: z.number().int().min(8).max(4096).default(64),
  openFiles: z.number().int().min(32).max(65536).default(256),
});
export type GradeLimits = z.infer<typeof GradeLimits>;
export const DEFAULT_GRADE_LIMITS: GradeLimits = GradeLimits.parse({});

/** A candidate: replacement contents for main files. Paths outside the task's main files are ignored. */
export const CandidateFile = TaskTestFile;
export type CandidateFile = z.infer<typeof CandidateFile>;

export const GradeResult = z.object({
  verdict: GradeVerdict,
  backend: SandboxBackend,
  isolation: GradingIsolation.default("judge"),
  /** True when the `process` backend graded it: no namespaces, no cgroup, no uid drop. */
  unsandboxed: z.boolean(),
  graderVersion: z.string(),
  /** Why the verdict is what it is (tamper evidence, syntax error, limit hit …). */
  reasons: z.array(z.string()),
  tests: z.array(TestOutcome),
  ignoredCandidatePaths: z.array(z.string()).default([]),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  stdoutTail: z.string(),
  stderrTail: z.string(),
  /** What the candidate process printed outside of calls (fd 1/2 directly); the judge's is stdoutTail. */
  candidateOutputTail: z.string().default(""),
  wallTimeMs: z.number().nonnegative(),
  cpuTimeMs: z.number().nonnegative().nullable(),
  peakMemoryKb: z.number().nonnegative().nullable(),
  /** "collected": this grade's judge process collected the tests; "forked": from a warm template that had. */
  judgeStart: z.enum(["collected", "forked"]).nullable().optional(),
  /** "imported": this grade's candidate process imported the task's support modules itself; "forked": from a session's candidate template that had. */
  candidateStart: z.enum(["imported", "forked"]).nullable().optional(),
});
export type GradeResult = z.infer<typeof GradeResult>;

// Strict: a misspelled key is refused at enqueue, not dropped on the way to the grader.
export const GradeJobPayload = z.strictObject({
  task: TaskSpec,
  candidate: z.array(CandidateFile).min(1),
  /** Test ids the reference produced; computed by a reference run on the agent when absent. */
  expectedTestIds: z.array(z.string()).optional(),
  limits: GradeLimits.partial().default({}),
  /** From the task's admission audit; absent = the isolated judge. */
  isolation: GradingIsolation.default("judge"),
});
export type GradeJobPayload = z.input<typeof GradeJobPayload>;

/** The most candidates one `grade-batch` job carries: tens of jobs per evaluation, not thousands. */
export const GRADE_BATCH_MAX_ITEMS = 64;

const Fingerprint = z.string().regex(/^[a-f0-9]{64}$/, "a task fingerprint (sha256 hex)");

/** A task of a batch, once however many of its items the batch carries; items name it by fingerprint. */
export const GradeBatchTask = z.strictObject({
  fingerprint: Fingerprint,
  task: TaskSpec,
  /** As on a grade payload: computed by a reference run on the agent (once per agent) when absent. */
  expectedTestIds: z.array(z.string()).optional(),
});
export type GradeBatchTask = z.input<typeof GradeBatchTask>;

export const GradeBatchItem = z.strictObject({
  /** The sender's name for the item (a candidate id, an answer's model and task); its result carries it back. */
  key: z.string().min(1).max(300),
  task: Fingerprint,
  candidate: z.array(CandidateFile).min(1),
  limits: GradeLimits.partial().default({}),
  isolation: GradingIsolation.default("judge"),
});
export type GradeBatchItem = z.input<typeof GradeBatchItem>;

export const GradeBatchJobPayload = z
  .strictObject({
    tasks: z.array(GradeBatchTask).min(1).max(GRADE_BATCH_MAX_ITEMS),
    items: z.array(GradeBatchItem).min(1).max(GRADE_BATCH_MAX_ITEMS),
  })
  .superRefine((p, ctx) => {
    // A wrong fingerprint would file one task's reference ids under another's in the agent's cache.
    const fingerprints = new Set<string>();
    for (const [i, t] of p.tasks.entries()) {
      if (fingerprints.has(t.fingerprint))
        ctx.addIssue({ code: "custom", path: ["tasks", i, "fingerprint"], message: "task listed twice" });
      fingerprints.add(t.fingerprint);
      if (taskFingerprint(t.task) !== t.fingerprint)
        ctx.addIssue({
          code: "custom",
          path: ["tasks", i, "fingerprint"],
          message: `not the fingerprint of task ${t.task.id}`,
        });
    }
    const keys = new Set<string>();
    const used = new Set<string>();
    for (const [i, item] of p.items.entries()) {
      if (keys.has(item.key))
        ctx.addIssue({ code: "custom", path: ["items", i, "key"], message: `item key ${item.key} used twice` });
      keys.add(item.key);
      used.add(item.task);
      if (!fingerprints.has(item.task))
        ctx.addIssue({ code: "custom", path: ["items", i, "task"], message: "names no task of the batch" });
    }
    for (const [i, t] of p.tasks.entries())
      if (!used.has(t.fingerprint))
        ctx.addIssue({ code: "custom", path: ["tasks", i], message: `task ${t.task.id} is graded by no item` });
  });
export type GradeBatchJobPayload = z.input<typeof GradeBatchJobPayload>;

export const AuditJobPayload = z.strictObject({
  task: TaskSpec,
  referenceRuns: z.number().int().min(1).max(10).default(3),
  maxMutants: z.number().int().min(0).max(500).default(60),
  limits: GradeLimits.partial().default({}),
  /**
   * An admin's reason for letting this task be graded in-process (the weaker mode). Without it, a
   * task whose reference passes only in-process is refused by the audit, never moved there silently.
   */
  inProcessReason: z.string().min(1).max(2000).optional(),
});
export type AuditJobPayload = z.input<typeof AuditJobPayload>;

export const SurvivingMutant = z.object({
  operator: z.string(),
  path: z.string(),
  line: z.number().int(),
  description: z.string(),
});
export type SurvivingMutant = z.infer<typeof SurvivingMutant>;

/**
 * A mutant of the reference the tests killed, with its program: kept so that near-miss preference
 * pairs can use it as a rejected answer one bug away from the repair (its verdict is the label).
 */
export const KilledMutant = SurvivingMutant.extend({
  source: z.string(),
  verdict: GradeVerdict,
  /** The ids of the tests it failed (errors counted as failures). */
  failingTests: z.array(z.string()).default([]),
});
export type KilledMutant = z.infer<typeof KilledMutant>;

export const AuditStatus = z.enum(["passed", "failed"]);
/** A task audit row: waiting for its job, or the audit's status, or an infra error. */
export const AUDIT_ROW_STATUSES = ["pending", "passed", "failed", "error"] as const;
export type AuditStatus = z.infer<typeof AuditStatus>;

export const AuditResult = z.object({
  status: AuditStatus,
  reasons: z.array(z.string()),
  referenceVerdicts: z.array(GradeVerdict),
  buggyVerdict: GradeVerdict,
  /** Why the buggy file got its verdict (e.g. which hidden test timed out). */
  buggyDetail: z.array(z.string()).default([]),
  expectedTestIds: z.array(z.string()),
  mutantsTotal: z.number().int().nonnegative(),
  mutantsKilled: z.number().int().nonnegative(),
  /** killed / total, null when no mutant could be generated. */
  mutationScore: z.number().min(0).max(1).nullable(),
  surviving: z.array(SurvivingMutant),
  /** The killed mutants with their programs (absent in results from before they were kept). */
  killed: z.array(KilledMutant).default([]),
  /** The tests the buggy main file failed (absent in results from before they were kept). */
  buggyFailingTests: z.array(z.string()).default([]),
  unsandboxed: z.boolean(),
  /** The mode the task needs; `in_process` only when the reference passes there and not in the judge. */
  isolation: GradingIsolation.default("judge"),
  /** Why the task needs in-process grading (the admin's reason and the judge's failures), else empty. */
  isolationReason: z.string().default(""),
  /** The reference passes only in-process and no admin allowed that: the audit refused the task. */
  needsInProcess: z.boolean().default(false),
  /**
   * The dependency-file symbols the reference fix reads, as `module.NAME` (apps/agent/grader/cross_file.py,
   * by AST; an import never read is no use). Empty: not a cross-file task. Absent: an audit from
   * before this was recorded, so unknown.
   */
  crossFile: z.array(z.string()).optional(),
});
export type AuditResult = z.infer<typeof AuditResult>;
