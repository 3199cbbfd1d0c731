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
});
export type TaskSpec = z.infer<typeof TaskSpec>;
