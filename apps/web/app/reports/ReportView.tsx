"use client";

import { useState } from "react";
import type { ExperimentReport, PairCategory } from "@agentlab/core";
import { LineChart, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { SeedsTable, SummaryTable } from "./StatsTables";

/** The report as tables and a chart; used by the report page and the public share page. */
export function ReportView({ report, onTask }: { report: ExperimentReport; onTask?: (split: "dev" | "test", taskId: string) => void }) {
  const [filter, setFilter] = useState<PairCategory | "all">("all");
  const series: Series[] = [
    { name: "base", points: [0, ...report.devCurve.points.map((p) => p.epoch)].map((x) => ({ x, y: report.devCurve.base })), dashed: true },
    ...[...new Set(report.devCurve.points.map((p) => p.seed))].map((seed) => ({
      name: `seed ${seed}`,
      points: [{ x: 0, y: report.devCurve.base }, ...report.devCurve.points.filter((p) => p.seed === seed).map((p) => ({ x: p.epoch, y: p.pass1 }))],
    })),
  ];
  // Reports stored before version 2 hold McNemar-only figures this view no longer reads.
  if ((report as { version: number }).version !== 2) return <p className="rounded border border-amber-400 bg-amber-50 p-3">This report was built by an earlier version; its statistics are not shown. Re-run the experiment's report stage to rebuild it.</p>;
  const rows = report.tasks.filter((t) => t.split === "test" && (filter === "all" || t.category === filter));
  return (
    <div className="space-y-6">
      {report.disclaimer && <p className="rounded border border-amber-400 bg-amber-50 p-3 font-semibold text-amber-900">{report.disclaimer}</p>}
      <p className="font-medium">{report.outcome.headline}</p>
      <p className="text-sm text-gray-600">{report.outcome.reason}</p>
      <Section title="Summary (pass@1; test: 95% intervals clustered by source group)">
        <SummaryTable report={report} />
      </Section>
      <Section title="Dev pass@1 by epoch">
        <LineChart series={series} xLabel="epoch" yLabel="dev pass@1" yDomain={[0, 1]} />
      </Section>
      {report.seeds && (
        <Section title="Seeds (test, each seed's best dev epoch)">
          <SeedsTable seeds={report.seeds} />
        </Section>
      )}
      <Section title="Checks">
        <p>Protocol: {report.protocol.ok ? "identical for every compared evaluation" : "MISMATCH"}</p>
        {report.protocol.protocol && (
          <p className="text-sm text-gray-600">
            {report.protocol.protocol.backend} {report.protocol.protocol.backendVersion} · {report.protocol.protocol.device} · {report.protocol.protocol.dtype} · decoding from the {report.protocol.protocol.generationConfig} · grader {report.protocol.protocol.graderVersion}
          </p>
        )}
        <p>Contamination: {report.contamination.testTasksWithLeak} of {report.contamination.testTasks} test tasks overlap train, dev or the SFT data (exact {report.contamination.exactPairs}, normalized {report.contamination.normalizedPairs}, {report.contamination.n}-gram {report.contamination.ngramPairs})</p>
        {/* Reports stored before issue 12 lack these fields. */}
        {report.devContamination && <p>Dev contamination: {report.devContamination.testTasksWithLeak} of {report.devContamination.testTasks} dev tasks overlap the SFT data (exact {report.devContamination.exactPairs})</p>}
        {(report.excluded ?? []).filter((e) => e.count > 0).map((e) => (
          <p key={`${e.split}:${e.comparison}`}>{e.split} · {e.comparison}: {e.note} ({e.taskIds.slice(0, 5).join(", ")}{e.count > 5 ? ", …" : ""})</p>
        ))}
      </Section>
      <Section title="Per-task (test)">
        <select value={filter} onChange={(e) => setFilter(e.target.value as PairCategory | "all")} className="mb-2 border p-1 text-sm">
          {["all", "improved", "regressed", "both_pass", "both_fail"].map((f) => <option key={f} value={f}>{f}</option>)}
        </select>
        <table className="w-full text-sm">
          <tbody>
            {rows.map((t) => (
              <tr key={t.taskId} className={onTask ? "cursor-pointer hover:bg-gray-50" : ""} onClick={() => onTask?.(t.split, t.taskId)}>
                <td className="font-mono">{t.taskId}</td><td>{t.group}</td><td>{t.base}</td><td>{t.sft}</td><td>{t.category}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </div>
  );
}
