"use client";

import { Fragment, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import {
  TASK_CATEGORY_TEXT,
  type ExperimentReport,
  type TaskView,
  type TaskViewCategory,
  type TaskViewRow,
} from "@agentlab/core";
import { useTRPC } from "../_lib/trpc";
import { Badge, type Tone } from "../_components/Badge";
import { VerdictBadge } from "../_components/StatusBadges";
import { ErrorBox } from "../_components/ErrorBox";
import { TaskDetail } from "./TaskDetail";
import { SampleVerdicts } from "./SampleVerdicts";

// The per-task view on dev and test with filters and search. With a reportId (the signed-in
// report) a row opens, under it, the task's answers, diffs and grader output; the share page lists verdicts only.

const FILTERS: { id: TaskViewCategory | "all"; label: string }[] = [
  { id: "all", label: "all" },
  { id: "improved", label: "improved" },
  { id: "regressed", label: "regressed" },
  { id: "both_pass", label: "both pass" },
  { id: "both_fail", label: "both fail" },
  { id: "same_rate", label: "same rate" },
  { id: "excluded", label: "excluded" },
];
const tone: Record<TaskViewCategory, Tone> = {
  improved: "green",
  regressed: "red",
  both_pass: "neutral",
  both_fail: "neutral",
  same_rate: "neutral",
  excluded: "amber",
};

// Reports built before the task view: the paired rows as the view, which is all they hold.
function legacyViews(r: ExperimentReport): TaskView[] {
  return (["test", "dev"] as const).map((split) => ({
    split,
    baseKey: "base" as const,
    otherKey: "",
    otherLabel: r.outcome.selectedLabel,
    shown: "Paired tasks only (a report built before the full per-task view).",
    rows: r.tasks
      .filter((t) => t.split === split)
      .map(
        (t): TaskViewRow => ({
          split,
          taskId: t.taskId,
          group: t.group,
          base: t.base,
          other: t.sft,
          category: t.category,
          inProcess: false,
        }),
      ),
  }));
}

function Detail({ reportId, view, row }: { reportId: string; view: TaskView; row: TaskViewRow }) {
  const taskId = row.taskId;
  const trpc = useTRPC();
  // Multi-sample reports: one sample index is shown at a time, for both sides.
  const [sample, setSample] = useState(0);
  const keys = [...new Set([view.baseKey, view.otherKey].filter(Boolean))];
  const q = useQuery(trpc.reports.taskDetail.queryOptions({ reportId, split: view.split, taskId, modelKeys: keys }));
  if (q.error) return <ErrorBox error={q.error} />;
  if (!q.data) return <p className="text-xs text-zinc-500">Loading the answers…</p>;
  const find = (k: string) => q.data.answers.find((a) => a.modelKey === k && a.sampleIndex === sample);
  const picker = row.baseSamples ? (
    <div className="mb-2 flex flex-wrap items-center gap-4 text-xs" data-testid="sample-picker">
      <span>Sample {sample} shown; pick another:</span>
      <span>
        base <SampleVerdicts samples={row.baseSamples} picked={sample} onPick={setSample} />
      </span>
      {view.otherKey && view.otherKey !== "base" && (
        <span>
          {view.otherLabel} <SampleVerdicts samples={row.otherSamples} picked={sample} onPick={setSample} />
        </span>
      )}
    </div>
  ) : null;
  return (
    <>
      {picker}
      <TaskDetail
        data={q.data}
        base={{ key: "base", label: "base", answer: find("base") }}
        other={{
          key: view.otherKey || "base",
          label: view.otherKey ? view.otherLabel : "base",
          answer: find(view.otherKey || "base"),
        }}
      />
    </>
  );
}

export function TaskViewSection({ report, reportId }: { report: ExperimentReport; reportId?: string }) {
  const views = report.taskViews ?? legacyViews(report);
  const [split, setSplit] = useState<"test" | "dev">("test");
  const [filter, setFilter] = useState<TaskViewCategory | "all">("all");
  const [search, setSearch] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const view = views.find((v) => v.split === split) ?? views[0];
  if (!view) return <p className="text-sm text-zinc-500">No per-task results.</p>;
  const q = search.trim().toLowerCase();
  const rows = view.rows.filter(
    (r) =>
      (filter === "all" || r.category === filter) &&
      (!q || r.taskId.toLowerCase().includes(q) || r.group.toLowerCase().includes(q)),
  );
  const count = (c: TaskViewCategory | "all") =>
    c === "all" ? view.rows.length : view.rows.filter((r) => r.category === c).length;
  return (
    <div className="space-y-3" data-testid="task-view">
      <div className="flex flex-wrap items-center gap-2">
        <div role="tablist" aria-label="split" className="flex gap-1">
          {(["test", "dev"] as const).map((s) => (
            <button
              key={s}
              role="tab"
              aria-selected={split === s}
              onClick={() => {
                setSplit(s);
                setOpen(null);
              }}
              className={`rounded border px-2 py-1 text-xs ${split === s ? "border-zinc-800 bg-zinc-800 text-white" : "border-zinc-300 bg-white"}`}
            >
              {s}
            </button>
          ))}
        </div>
        <div role="group" aria-label="filter" className="flex flex-wrap gap-1">
          {FILTERS.filter((f) => f.id !== "same_rate" || report.samples).map((f) => (
            <button
              key={f.id}
              aria-pressed={filter === f.id}
              onClick={() => setFilter(f.id)}
              title={f.id === "all" ? undefined : TASK_CATEGORY_TEXT[f.id]}
              className={`rounded-full border px-2 py-0.5 text-xs ${filter === f.id ? "border-blue-600 bg-blue-50 text-blue-800" : "border-zinc-300 bg-white text-zinc-700"}`}
            >
              {f.label} <span className="tabular-nums text-zinc-500">{count(f.id)}</span>
            </button>
          ))}
        </div>
        <input
          type="search"
          aria-label="search tasks"
          placeholder="search task id or group"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          className="ml-auto w-56 rounded border border-zinc-300 px-2 py-1 text-xs"
        />
      </div>
      <p className="text-xs text-zinc-600" data-testid="task-view-shown">
        {view.shown}
      </p>
      <div className="overflow-x-auto rounded-lg border border-zinc-200">
        <table className="w-full border-collapse text-left text-[13px]" data-testid="task-table">
          <thead>
            <tr className="border-b border-zinc-200 bg-zinc-50/80 text-[11px] font-semibold uppercase tracking-wide text-zinc-500">
              <th scope="col" className="px-3 py-2">
                task
              </th>
              <th scope="col" className="px-3 py-2">
                group
              </th>
              <th scope="col" className="px-3 py-2">
                base
              </th>
              <th scope="col" className="px-3 py-2 normal-case">
                {view.otherKey === "base" ? "base (again)" : view.otherLabel}
              </th>
              <th scope="col" className="px-3 py-2">
                outcome
              </th>
              <th scope="col" className="px-3 py-2">
                grading
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-100">
            {rows.map((r) => (
              <Fragment key={r.taskId}>
                <tr
                  className={reportId ? "cursor-pointer hover:bg-zinc-50" : ""}
                  onClick={reportId ? () => setOpen(open === r.taskId ? null : r.taskId) : undefined}
                  aria-expanded={reportId ? open === r.taskId : undefined}
                >
                  <td className="px-3 py-1.5 font-mono text-xs">{r.taskId}</td>
                  <td className="px-3 py-1.5 text-xs">{r.group}</td>
                  <td className="px-3 py-1.5">
                    {r.baseSamples ? (
                      <SampleVerdicts samples={r.baseSamples} />
                    ) : (
                      <VerdictBadge verdict={r.base ?? "no verdict"} />
                    )}
                  </td>
                  <td className="px-3 py-1.5">
                    {r.otherSamples ? (
                      <SampleVerdicts samples={r.otherSamples} />
                    ) : (
                      <VerdictBadge verdict={r.other ?? "no verdict"} />
                    )}
                  </td>
                  <td className="px-3 py-1.5">
                    <Badge tone={tone[r.category]}>{r.category.replace("_", " ")}</Badge>
                  </td>
                  <td className="px-3 py-1.5 text-xs">
                    {r.inProcess ? <Badge tone="amber">in-process</Badge> : "judge"}
                  </td>
                </tr>
                {reportId && open === r.taskId && (
                  <tr>
                    <td colSpan={6} className="bg-zinc-50/60 p-3">
                      <Detail reportId={reportId} view={view} row={r} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
            {rows.length === 0 && (
              <tr>
                <td colSpan={6} className="px-3 py-3 text-center text-xs text-zinc-500">
                  No task matches this filter{q ? " and search" : ""}.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}
