import { z } from "zod";
import { ExperimentState } from "./stages";

// The runs table (experiments list) and the compare view: their query input, the annotation of a
// run (tags, notes), and the per-task outcome matrix built from stored reports. Pure.

export const RUN_SORT_KEYS = [
  "createdAt",
  "name",
  "state",
  "outcome",
  "testBase",
  "testSft",
  "delta",
  "p",
  "baseModel",
  "samples",
  "durationMs",
] as const;
export type RunSortKey = (typeof RUN_SORT_KEYS)[number];

export const RunTag = z
  .string()
  .trim()
  .min(1, "a tag cannot be empty")
  .max(40, "a tag has at most 40 characters")
  .regex(/^[\w.:/+-]+$/u, "a tag is letters, digits and . : / + - _ (no spaces)");
export type RunTag = z.infer<typeof RunTag>;

export const RunAnnotation = z.object({
  id: z.uuid(),
  tags: z.array(RunTag).max(20, "at most 20 tags").optional(),
  notes: z.string().max(10_000, "notes have at most 10,000 characters").optional(),
});
export type RunAnnotation = z.infer<typeof RunAnnotation>;

export const RunListInput = z.object({
  state: ExperimentState.optional(),
  outcome: z.enum(["adapter_selected", "base_kept"]).optional(),
  tag: RunTag.optional(),
  /** Matched against the name, base model and notes (case-insensitive substring). */
  q: z.string().trim().max(200).optional(),
  splitId: z.uuid().optional(),
  archived: z.boolean().default(false),
  sort: z.enum(RUN_SORT_KEYS).default("createdAt"),
  dir: z.enum(["asc", "desc"]).default("desc"),
  limit: z.number().int().min(1).max(200).default(50),
  offset: z.number().int().min(0).default(0),
});
export type RunListInput = z.input<typeof RunListInput>;
export type RunListQuery = z.output<typeof RunListInput>;

export const CompareInput = z.object({
  ids: z.array(z.uuid()).min(2, "pick at least two experiments").max(8, "compare at most 8 experiments"),
});
export type CompareInput = z.infer<typeof CompareInput>;

/** A task's outcome in one experiment's report: base and adapter verdicts on the same task. */
export type TaskCell = { base: string; sft: string; category: string };
type ReportTaskRow = { split: string; taskId: string; base: string; sft: string; category: string };

/**
 * Rows = test tasks (union over the reports), columns = experiments in the order given; a missing
 * cell means that report has no paired row for the task (base kept without a compared adapter).
 */
export function outcomeMatrix(
  reports: { experimentId: string; tasks: readonly ReportTaskRow[] }[],
): { taskId: string; cells: (TaskCell | null)[]; differs: boolean }[] {
  const byTask = new Map<string, (TaskCell | null)[]>();
  reports.forEach((r, col) => {
    for (const t of r.tasks) {
      if (t.split !== "test") continue;
      const cells = byTask.get(t.taskId) ?? reports.map(() => null);
      cells[col] = { base: t.base, sft: t.sft, category: t.category };
      byTask.set(t.taskId, cells);
    }
  });
  return [...byTask.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([taskId, cells]) => {
      const seen = new Set(cells.map((c) => (c ? c.sft : "—")));
      return { taskId, cells, differs: seen.size > 1 };
    });
}

/** The parts of a stored report (jsonb) the compare view reads, checked instead of cast; older report versions parse to null. */
export const ReportDigest = z.object({
  config: z.unknown(),
  summary: z.tuple(
    [
      z.object({
        n: z.number(),
        base: z.number(),
        sft: z.number().nullable(),
        delta: z.number().nullable(),
        sftLabel: z.string().nullable(),
      }),
    ],
    z.unknown(),
  ),
  outcome: z.object({ selectedLabel: z.string(), headline: z.string() }),
  /** The evaluation protocol the report's evaluations ran under (absent in old reports). */
  protocol: z.object({ protocol: z.unknown() }).optional(),
  /** Dev pass@1 per seed and epoch, overlaid in the compare view. */
  devCurve: z
    .object({
      base: z.number(),
      points: z.array(z.object({ seed: z.number(), epoch: z.number(), pass1: z.number() })),
    })
    .optional(),
  tasks: z.array(
    z.object({ split: z.string(), taskId: z.string(), base: z.string(), sft: z.string(), category: z.string() }),
  ),
});
export type ReportDigest = z.infer<typeof ReportDigest>;
