"use client";

import { useState } from "react";
import type { ExperimentReport, PairCategory } from "@agentlab/core";
import { LineChart, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ci = (i: { value: number; lo: number; hi: number } | null) => (i ? `${pct(i.value)} [${pct(i.lo)}, ${pct(i.hi)}]` : "—");

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
  const rows = report.tasks.filter((t) => t.split === "test" && (filter === "all" || t.category === filter));
  return (
    <div className="space-y-6">
      {report.disclaimer && <p className="rounded border border-amber-400 bg-amber-50 p-3 font-semibold text-amber-900">{report.disclaimer}</p>}
      <p className="font-medium">{report.outcome.headline}</p>
      <p className="text-sm text-gray-600">{report.outcome.reason}</p>
      <Section title="Summary (pass@1, 95% cluster-bootstrap intervals)">
        <table className="w-full text-sm" data-testid="summary-table">
          <thead><tr><th className="text-left">split</th><th>Base</th><th>SFT</th><th>Δ</th><th>improved / regressed</th><th>McNemar p</th><th></th></tr></thead>
          <tbody>
            {report.summary.map((s) => (
              <tr key={s.split}>
                <td>{s.split}</td><td>{ci(s.base)}</td><td>{ci(s.sft)}</td>
                <td>{s.delta ? `${(100 * s.delta.value).toFixed(1)} pp [${(100 * s.delta.lo).toFixed(1)}, ${(100 * s.delta.hi).toFixed(1)}]` : "—"}</td>
                <td>{s.sft ? `${s.improved} / ${s.regressed}` : "—"}</td><td>{s.mcnemarP?.toPrecision(3) ?? "—"}</td><td>{s.label}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Dev pass@1 by epoch">
        <LineChart series={series} xLabel="epoch" yLabel="dev pass@1" yDomain={[0, 1]} />
      </Section>
      {report.seeds && (
        <Section title="Seeds (test, each seed's best dev epoch)">
          <table className="w-full text-sm">
            <tbody>
              {report.seeds.perSeed.map((s) => (
                <tr key={s.seed}><td>seed {s.seed}</td><td>{pct(s.treatedPass)}</td><td>{ci({ value: s.delta, lo: s.interval.lo, hi: s.interval.hi })}</td><td>{s.improved} / {s.regressed}</td><td>p={s.mcnemarP.toPrecision(3)}</td></tr>
              ))}
              <tr><td>pooled</td><td>{pct(report.seeds.pooled.treatedPass)}</td><td>{ci({ value: report.seeds.pooled.mean, lo: report.seeds.pooled.lo, hi: report.seeds.pooled.hi })}</td><td /><td /></tr>
            </tbody>
          </table>
        </Section>
      )}
      <Section title="Checks">
        <p>Protocol: {report.protocol.ok ? "identical for every compared evaluation" : "MISMATCH"}</p>
        <p>Contamination: {report.contamination.testTasksWithLeak} of {report.contamination.testTasks} test tasks overlap SFT data or dev (exact {report.contamination.exactPairs}, normalized {report.contamination.normalizedPairs}, {report.contamination.n}-gram {report.contamination.ngramPairs})</p>
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
