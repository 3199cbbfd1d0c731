import { z } from "zod";

// Task spec v1 (architecture brief §3). The shape only; file-level checks (paths, sizes, UTF-8,
// duplicates, main/reference consistency) live in validate.ts so that every problem is reported.
export const TASK_ID_RE = /^[A-Za-z0-9._/-]{1,200}$/;

export const TaskFileRole = z.enum(["main", "dependency"]);
export type TaskFileRole = z.infer<typeof TaskFileRole>;

export const TaskFile = z.object({
  path: z.string(),
  role: TaskFileRole,
  content: z.string(),
});
export type TaskFile = z.infer<typeof TaskFile>;

export const TaskTestFile = z.object({ path: z.string(), content: z.string() });
export type TaskTestFile = z.infer<typeof TaskTestFile>;

export const TaskSpec = z.object({
  id: z.string().regex(TASK_ID_RE, "must be 1-200 chars of [A-Za-z0-9._/-]"),
  source_group: z.string().regex(TASK_ID_RE, "must be 1-200 chars of [A-Za-z0-9._/-]"),
  language: z.literal("python"),
  instruction: z.string().min(1),
  files: z.array(TaskFile).min(1),
  public_tests: z.array(TaskTestFile),
  hidden_tests: z.array(TaskTestFile).min(1, "at least one hidden test is required"),
  reference: z.array(TaskTestFile),
  metadata: z.record(z.string(), z.unknown()).default({}),
  /**
   * The unit of dependence for inference (family, shape, source program), when tasks of several
   * source groups are not independent: the report clusters its tests and intervals by it. Splits
   * still keep source groups whole. Absent: the source group is the unit.
   */
  cluster: z.string().regex(TASK_ID_RE, "must be 1-200 chars of [A-Za-z0-9._/-]").optional(),
});
export type TaskSpec = z.infer<typeof TaskSpec>;

// Size limits are configurable per import; the defaults are those of the format (brief §3).
export const TaskLimits = z.object({
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  maxTaskBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  maxPathChars: z.number().int().positive().default(255),
  // Whole-file limits: what one upload may cost the server (memory, the worker's time, the
  // proposals' pair counts). Each refusal names its limit, so a caller knows which one to split by.
  maxTasks: z.number().int().positive().default(200_000),
  maxGroups: z.number().int().positive().default(100_000),
  maxImportBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024 * 1024),
  /** Nesting of JSON arrays and objects in one line; a task needs 3 (files[].path), deep input only costs stack. */
  maxDepth: z.number().int().positive().default(32),
});
export type TaskLimits = z.infer<typeof TaskLimits>;
export const DEFAULT_TASK_LIMITS: TaskLimits = TaskLimits.parse({});

export const TaskProblemCode = z.enum([
  "invalid_json",
  "invalid_utf8",
  "missing_field",
  "wrong_type",
  "invalid_value",
  "duplicate_id",
  "duplicate_path",
  "unsafe_path",
  "too_large",
  "no_main_file",
  "no_hidden_test",
  "reference_not_main",
  "empty_file",
  "too_many_tasks",
  "too_many_groups",
  "too_deep",
]);
export type TaskProblemCode = z.infer<typeof TaskProblemCode>;

/** One problem in a task file; `line` is 1-based, `field` a path such as `files[0].path` ("" for the whole line). */
export const TaskProblem = z.object({
  line: z.number().int().min(1),
  field: z.string(),
  code: TaskProblemCode,
  message: z.string(),
  taskId: z.string().optional(),
});
export type TaskProblem = z.infer<typeof TaskProblem>;

export const formatProblem = (p: TaskProblem, file?: string): string =>
  `${file ? `${file}:` : ""}${p.line}: ${p.field ? `${p.field}: ` : ""}${p.message} [${p.code}]`;

export const PoolName = z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "pool names are 1-100 chars of [A-Za-z0-9._-]");
export type PoolName = z.infer<typeof PoolName>;

/** What the import endpoint answers (the CLI and the upload page parse it). */
export const ImportResponse = z.union([
  z.object({
    ok: z.literal(true),
    poolId: z.string(),
    imported: z.number(),
    exactDuplicates: z.number(),
    normalizedDuplicates: z.number(),
    /** Tasks whose fingerprint was already in the pool before this import (a re-upload, 810 → 812). */
    duplicatesOfExisting: z.number(),
    mergeProposals: z.number(),
    snapshotHash: z.string(),
    /** References identical (up to comments and whitespace) across source groups, with a proposed cluster each. */
    clusterProposals: z
      .object({
        total: z.number(),
        proposals: z.array(
          z.object({ cluster: z.string(), tasks: z.number(), groups: z.number(), sampleTaskIds: z.array(z.string()) }),
        ),
      })
      .optional(),
  }),
  z.object({ ok: z.literal(false), problemCount: z.number(), problems: z.array(TaskProblem) }),
]);
export type ImportResponse = z.infer<typeof ImportResponse>;
