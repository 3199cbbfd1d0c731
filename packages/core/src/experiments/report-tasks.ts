import type { GradingIsolation } from "../grading/schemas";
import { modelKey, modelLabel, type ModelRef } from "./selection";
import { outcomeScore, type SampleVerdict } from "./report-samples";

// The report's per-task view: on dev and on test, which two models are shown side by
// side, and one row per task, excluded pairs included. It is never empty when the base is kept: it
// then says what it shows instead of a comparison that was never made. Counting and inference use
// the paired rows (report.tasks) only; this view adds the rows a reader needs to look at.

/** `samples`: every graded answer of the task when the evaluation asked for more than one. */
export type TaskOutcome = {
  taskId: string;
  group: string;
  /** The task's declared cluster: the unit of dependence for inference where declared. */
  cluster?: string;
  verdict: string;
  isolation?: GradingIsolation;
  samples?: SampleVerdict[];
};
/** same_rate: equal pass rates strictly between 0 and 1 (multi-sample evaluations only). */
export type PairCategory = "improved" | "regressed" | "both_pass" | "both_fail" | "same_rate";
export type TaskViewCategory = PairCategory | "excluded";

/** b, s: 0/1 outcomes, or pass rates over a task's samples. */
export function category(b: number, s: number): PairCategory {
  if (b === s) return b === 1 ? "both_pass" : b === 0 ? "both_fail" : "same_rate";
  return s > b ? "improved" : "regressed";
}

/** One task in the view; a null verdict is a side without a grader verdict (the pair is excluded). */
export type TaskViewRow = {
  split: "dev" | "test";
  taskId: string;
  group: string;
  base: string | null;
  other: string | null;
  category: TaskViewCategory;
  /** Either side was graded in-process (the weaker mode, docs/grading.md). */
  inProcess: boolean;
  /** Multi-sample evaluations: each side's pass rate and every sample's verdict. */
  baseRate?: number | null;
  otherRate?: number | null;
  baseSamples?: SampleVerdict[];
  otherSamples?: SampleVerdict[];
};

export type TaskView = {
  split: "dev" | "test";
  baseKey: "base";
  /** modelKey of the model shown against the base ("base" when only the base was evaluated). */
  otherKey: string;
  otherLabel: string;
  /** What is shown and why, in words; printed above the table. */
  shown: string;
  rows: TaskViewRow[];
};

export const TASK_CATEGORY_TEXT: Record<TaskViewCategory, string> = {
  improved: "the base fails the task and the other model passes it (with samples: a higher pass rate)",
  regressed: "the base passes the task and the other model fails it (with samples: a lower pass rate)",
  both_pass: "both pass",
  both_fail: "both fail",
  same_rate: "both pass some of their samples, at the same rate",
  excluded: "one side never got a grader verdict (infra errors after the bounded retries): left out of every count",
};

function viewRows(
  split: "dev" | "test",
  base: readonly TaskOutcome[],
  other: readonly TaskOutcome[],
  missing: readonly string[],
): TaskViewRow[] {
  const b = new Map(base.map((o) => [o.taskId, o]));
  const o = new Map(other.map((x) => [x.taskId, x]));
  const ids = [...new Set([...b.keys(), ...o.keys(), ...missing])].sort();
  return ids.map((taskId) => {
    const x = b.get(taskId);
    const y = o.get(taskId);
    const cat: TaskViewCategory = x && y ? category(outcomeScore(x), outcomeScore(y)) : "excluded";
    const sampled = x?.samples || y?.samples;
    return {
      split,
      taskId,
      group: x?.group ?? y?.group ?? "",
      base: x?.verdict ?? null,
      other: y?.verdict ?? null,
      category: cat,
      inProcess: x?.isolation === "in_process" || y?.isolation === "in_process",
      ...(sampled
        ? {
            baseRate: x ? outcomeScore(x) : null,
            otherRate: y ? outcomeScore(y) : null,
            baseSamples: x?.samples ?? [],
            otherSamples: y?.samples ?? [],
          }
        : {}),
    };
  });
}

type ViewInput = {
  dev: Record<string, TaskOutcome[]>;
  test: Record<string, TaskOutcome[]>;
  noVerdict?: { dev: Record<string, string[]>; test: Record<string, string[]> };
};

function view(split: "dev" | "test", input: ViewInput, other: ModelRef, shown: string): TaskView {
  const key = modelKey(other);
  const missing = [
    ...(input.noVerdict?.[split].base ?? []),
    ...(key === "base" ? [] : (input.noVerdict?.[split][key] ?? [])),
  ];
  return {
    split,
    baseKey: "base",
    otherKey: key,
    otherLabel: modelLabel(other),
    shown,
    rows: viewRows(split, input[split].base ?? [], input[split][key] ?? [], missing),
  };
}

/**
 * Dev: base vs the selected adapter, or vs the best dev adapter when the base is kept. Test: base vs
 * the selected adapter; when the base is kept, base vs that best adapter if test evaluated it (for
 * context, nothing is claimed), else the base alone.
 */
export function taskViews(input: ViewInput, selected: ModelRef, devRival: ModelRef | null, kept: boolean): TaskView[] {
  const base: ModelRef = { model: "base" };
  const dev = devRival
    ? view(
        "dev",
        input,
        devRival,
        kept
          ? `Base vs the best dev adapter (${modelLabel(devRival)}), which did not beat the base: the base was kept.`
          : `Base vs the selected adapter (${modelLabel(devRival)}). Dev chose it, so these outcomes are optimistic.`,
      )
    : view("dev", input, base, "Base only: no adapter was evaluated on dev.");
  if (!kept)
    return [
      dev,
      view(
        "test",
        input,
        selected,
        `Base vs the selected adapter (${modelLabel(selected)}): the report's one inference.`,
      ),
    ];
  const onTest = devRival && input.test[modelKey(devRival)] ? devRival : null;
  const test = onTest
    ? view(
        "test",
        input,
        onTest,
        `The base was kept, so no gain is claimed. Shown for context: base vs ${modelLabel(onTest)} (the best dev adapter, evaluated on test for the per-seed table).`,
      )
    : view(
        "test",
        input,
        base,
        "The base was kept and only the base was evaluated on test: base vs base, each task's base verdict.",
      );
  return [dev, test];
}

/** Verdicts per split and model, and how many of them came from in-process grading. */
export type IsolationCount = { split: "dev" | "test"; modelKey: string; total: number; inProcess: number };

export const ISOLATION_NOTE =
  "In-process grading imports the candidate's module into the pytest process: it is the weaker mode, used only for tasks whose audit found that their tests need the candidate's objects themselves (docs/grading.md).";

export function isolationCounts(input: Pick<ViewInput, "dev" | "test">): IsolationCount[] {
  return (["dev", "test"] as const).flatMap((split) =>
    Object.entries(input[split])
      .sort(([a], [b]) => (a === "base" ? -1 : b === "base" ? 1 : a < b ? -1 : a > b ? 1 : 0))
      .map(([key, xs]) => ({
        split,
        modelKey: key,
        total: xs.length,
        inProcess: xs.filter((x) => x.isolation === "in_process").length,
      })),
  );
}

/** "all verdicts from the isolated judge", or "n of N verdicts from in-process grading". */
export function isolationText(c: Pick<IsolationCount, "total" | "inProcess">): string {
  return c.inProcess === 0
    ? "all verdicts from the isolated judge"
    : `${c.inProcess} of ${c.total} verdicts from in-process grading`;
}
