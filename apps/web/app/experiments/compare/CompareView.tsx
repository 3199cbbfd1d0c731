"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useState, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { EmptyState } from "../../_components/EmptyState";
import { ErrorBox } from "../../_components/ErrorBox";
import { PageHeader, Section } from "../../_components/PageHeader";
import { duration, interval, pValue, pct, pp } from "../../../client/format";
import { useTRPC } from "../../_lib/trpc";
import { DevCurves } from "../../_components/DevCurves";
import { RecipeDiff } from "./RecipeDiff";

const verdictMark = (v: string) => (v === "pass" ? "✓" : "✗");
const cellTone: Record<string, string> = {
  improved: "bg-emerald-50 text-emerald-800",
  regressed: "bg-red-50 text-red-800",
  both_pass: "text-zinc-700",
  both_fail: "text-zinc-400",
};

/** Two or more runs on one split: recipe and figures side by side, then each test task's outcome per run. */
export function CompareView() {
  const trpc = useTRPC();
  const ids = (useSearchParams()?.get("ids") ?? "").split(",").filter(Boolean);
  const [onlyDiff, setOnlyDiff] = useState(false);
  const q = useQuery(trpc.runs.compare.queryOptions({ ids }, { enabled: ids.length >= 2 }));
  if (ids.length < 2)
    return (
      <EmptyState
        title="Pick two or more runs to compare"
        action={
          <Link className="text-sm font-medium text-blue-700 underline" href="/experiments">
            Back to the runs table
          </Link>
        }
      >
        Tick their boxes in the runs table, then press Compare.
      </EmptyState>
    );
  if (q.error) return <ErrorBox error={q.error} title="Cannot compare these runs" />;
  if (!q.data) return <p className="text-sm text-zinc-500">Loading…</p>;
  const { runs, matrix, recipe, protocol, protocolsDiffer, curves } = q.data;
  const rows: [string, (r: (typeof runs)[number]) => ReactNode][] = [
    ["State", (r) => r.state],
    ["Outcome", (r) => (r.outcome ? r.outcome.replace("_", " ") : "—")],
    ["Selected", (r) => r.selected ?? "—"],
    ["Base model", (r) => <span className="font-mono text-xs">{r.baseModel ?? "—"}</span>],
    ["Data", (r) => (r.samples === null ? "—" : `${r.samples} samples`)],
    [
      "Epochs · lr · batch",
      (r) => (r.recipe ? `${r.recipe.epochs} · ${r.recipe.learningRate} · ${r.recipe.batchSize}` : "—"),
    ],
    ["LoRA r / α", (r) => (r.recipe ? `${r.recipe.loraR} / ${r.recipe.loraAlpha}` : "—")],
    ["Seeds", (r) => r.recipe?.seeds.join(", ") ?? "—"],
    ["Dev pass@1 base → adapter", (r) => (r.dev ? `${pct(r.dev.base)} → ${pct(r.dev.sft)}` : "—")],
    ["Test pass@1 base", (r) => pct(r.testBase)],
    ["Test pass@1 adapter", (r) => pct(r.testSft)],
    ["Δ [interval]", (r) => (r.delta === null ? "—" : `${pp(r.delta)} ${interval(r.ciLo, r.ciHi)}`)],
    ["p", (r) => pValue(r.p)],
    ["Duration", (r) => duration(r.durationMs)],
  ];
  const shown = onlyDiff ? matrix.filter((m) => m.differs) : matrix;
  return (
    <div className="space-y-5">
      <PageHeader
        title="Compare experiments"
        description={`${runs.length} runs on ${runs[0]?.poolName ?? ""} / ${runs[0]?.splitName ?? ""}: the same frozen test tasks, so their figures compare.`}
      />
      <Section title="Figures">
        <div className="overflow-x-auto">
          <table className="w-full border-collapse text-left text-[13px]" aria-label="figures side by side">
            <thead>
              <tr className="border-b border-zinc-200">
                <th scope="col" className="px-2 py-1.5 text-[11px] font-semibold uppercase text-zinc-500">
                  &nbsp;
                </th>
                {runs.map((r) => (
                  <th key={r.id} scope="col" className="px-2 py-1.5">
                    <Link className="font-medium text-blue-700 hover:underline" href={`/experiments/${r.id}`}>
                      {r.name}
                    </Link>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100">
              {rows.map(([label, cell]) => (
                <tr key={label}>
                  <th scope="row" className="whitespace-nowrap px-2 py-1.5 text-xs font-medium text-zinc-500">
                    {label}
                  </th>
                  {runs.map((r) => (
                    <td key={r.id} className="px-2 py-1.5 tabular-nums">
                      {cell(r)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      {protocolsDiffer ? (
        <div
          role="alert"
          className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="protocols-differ"
        >
          These runs were evaluated under different protocols (
          {protocol
            .filter((r) => r.differs)
            .map((r) => r.field)
            .join(", ")}
          ): their test figures do not compare as they stand.
        </div>
      ) : null}
      <RecipeDiff title="Recipe" names={runs.map((r) => r.name)} rows={recipe} testId="recipe-diff" />
      <RecipeDiff title="Evaluation protocol" names={runs.map((r) => r.name)} rows={protocol} testId="protocol-diff" />
      <DevCurves curves={curves} what="run" testId="compare-curves" />
      <Section
        title={`Test tasks (${shown.length} of ${matrix.length})`}
        actions={
          <label className="flex items-center gap-1 text-xs text-zinc-600">
            <input type="checkbox" checked={onlyDiff} onChange={(e) => setOnlyDiff(e.target.checked)} /> only tasks
            where the runs differ
          </label>
        }
      >
        <p className="mb-2 text-xs text-zinc-500">
          Each cell: base → adapter on that task (✓ pass, ✗ fail); green improved, red regressed; empty where the run
          compared no adapter on test.
        </p>
        {matrix.length === 0 ? (
          <EmptyState title="No per-task test outcomes yet">
            The runs have no finished report with a compared adapter.
          </EmptyState>
        ) : (
          <div className="max-h-[600px] overflow-auto">
            <table className="w-full border-collapse text-left text-[13px]" aria-label="per-task outcomes">
              <thead className="sticky top-0 bg-white">
                <tr className="border-b border-zinc-200">
                  <th scope="col" className="px-2 py-1.5 text-[11px] font-semibold uppercase text-zinc-500">
                    Task
                  </th>
                  {runs.map((r) => (
                    <th key={r.id} scope="col" className="px-2 py-1.5 text-xs font-medium">
                      {r.name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100">
                {shown.map((m) => (
                  <tr key={m.taskId}>
                    <td className="px-2 py-1 font-mono text-xs">{m.taskId}</td>
                    {m.cells.map((c, i) => (
                      <td
                        key={runs[i]?.id ?? i}
                        className={`px-2 py-1 font-mono text-xs ${c ? (cellTone[c.category] ?? "") : ""}`}
                        title={c ? `${c.base} → ${c.sft}` : "no adapter compared"}
                      >
                        {c ? `${verdictMark(c.base)} → ${verdictMark(c.sft)}` : ""}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </div>
  );
}
