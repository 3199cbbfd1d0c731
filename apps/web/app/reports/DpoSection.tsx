"use client";

import Link from "next/link";
import {
  FailingLayer,
  formatDeltaPp,
  formatMde,
  formatPct,
  modelKey,
  type DpoReportSection,
  type ExperimentReport,
} from "@agentlab/core";
import { LineChart, type RefLine } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { dpoDevSeries, dpoThreeWay, threeWayRows, type DevSeries, type ThreeWay } from "../_lib/dpo-report";
import { LAYER_TEXT } from "../_lib/pairs";
import { Cell, Explain, StatTable } from "./StatsTables";
import { UnitNote } from "./UnitNote";

// The sft+dpo part of the report: base, the dev-best SFT and the dev-best DPO model
// compared pairwise on test with the clustered statistics, dev pass@1 of every DPO epoch, and what
// each round's pairs were. Every figure is the stored report's; the share page shows the same.

const ci = (i: { value: number; lo: number; hi: number } | null) =>
  i ? `${formatPct(i.value)} [${formatPct(i.lo)}, ${formatPct(i.hi)}]` : "—";

/** The three pairwise test comparisons (base–SFT, base–arm, SFT–arm); `testId` names the table ("dpo", "grpo"). */
export function ThreeWayTable({ section, testId }: { section: ThreeWay; testId: "dpo" | "grpo" }) {
  return (
    <StatTable
      testId={`${testId}-comparisons`}
      head={[
        "comparison (A vs B)",
        { label: "A", left: true },
        "A pass@1",
        { label: "B", left: true },
        "B pass@1",
        "Δ (B − A)",
        "improved / regressed",
        { label: "test", left: true },
        "p",
        "MDE (80% power)",
        { label: "", left: true },
      ]}
    >
      {threeWayRows(section).map((r) =>
        r.kind === "missing" ? (
          <tr key={r.title} data-testid={`${testId}-comparison-missing`}>
            <Cell>{r.title}</Cell>
            <Cell left wrap className="text-zinc-500">
              not compared: {r.reason}
            </Cell>
          </tr>
        ) : (
          <tr key={r.title} data-testid={`${testId}-comparison`}>
            <Cell>{r.title}</Cell>
            <Cell left>{r.comparison.aLabel}</Cell>
            <Cell>{ci(r.comparison.row.base)}</Cell>
            <Cell left>{r.comparison.bLabel}</Cell>
            <Cell>{ci(r.comparison.row.sft)}</Cell>
            <Cell>
              {r.comparison.row.stats ? formatDeltaPp(r.comparison.row.stats.delta, r.comparison.row.stats.ci) : "—"}
            </Cell>
            <Cell>
              {r.comparison.row.improved} / {r.comparison.row.regressed}
            </Cell>
            <Cell left>{r.comparison.row.stats?.test ?? "—"}</Cell>
            <Cell>{r.comparison.row.stats ? r.comparison.row.stats.p.toPrecision(3) : "—"}</Cell>
            <Cell>{r.comparison.row.stats ? formatMde(r.comparison.row.stats) : "—"}</Cell>
            <Cell left wrap className={r.comparison.row.significant ? "font-semibold text-emerald-800" : ""}>
              {r.comparison.row.label}
              {r.comparison.row.stats && (
                <>
                  <br />
                  <UnitNote stats={r.comparison.row.stats} />
                </>
              )}
            </Cell>
          </tr>
        ),
      )}
    </StatTable>
  );
}

/** Dev pass@1 of the arm's epochs or snapshots, with the base and the SFT start as reference lines. */
export function ArmDevCurve({
  report,
  section,
  series,
  testId,
}: {
  report: ExperimentReport;
  section: ThreeWay;
  series: DevSeries[];
  testId: "dpo" | "grpo";
}) {
  const sftRow = section.selectedSft
    ? report.selection.table.find((r) => modelKey(r.ref) === modelKey(section.selectedSft ?? { model: "base" }))
    : undefined;
  const refs: RefLine[] = [
    { y: report.devCurve.base, label: "base" },
    ...(sftRow ? [{ y: sftRow.pass1, label: `SFT start: ${sftRow.label}` }] : []),
  ];
  return (
    <div className="max-w-[640px]" data-testid={`${testId}-dev-curve`}>
      <LineChart
        series={series}
        refLines={refs}
        integerX
        xLabel={`${section.arm} ${section.unit}`}
        yLabel="dev pass@1"
        yDomain={[0, 1]}
        height={220}
      />
    </div>
  );
}

function Rounds({ section, experimentId }: { section: DpoReportSection; experimentId?: string }) {
  return (
    <StatTable
      testId="dpo-rounds"
      head={[
        "round",
        { label: "rejected answers from", left: true },
        "pairs kept",
        "dropped",
        "down-weighted",
        "tasks",
        { label: "by failing layer", left: true },
        "median margin (kept)",
      ]}
    >
      {section.rounds.map((r) => (
        <tr key={r.round}>
          <Cell>
            {experimentId ? (
              <Link className="text-blue-700 underline" href={`/experiments/${experimentId}/pairs?round=${r.round}`}>
                round {r.round}
              </Link>
            ) : (
              `round ${r.round}`
            )}
          </Cell>
          <Cell left>{r.policyLabel}</Cell>
          <Cell>{r.stats?.kept ?? "—"}</Cell>
          <Cell>{r.stats?.dropped ?? "—"}</Cell>
          <Cell>{r.stats?.downweighted ?? "—"}</Cell>
          <Cell>{r.stats?.tasks ?? "—"}</Cell>
          <Cell left wrap>
            {r.stats
              ? FailingLayer.options
                  .flatMap((l) => (r.stats?.byFailingLayer[l] ? [`${LAYER_TEXT[l]} ${r.stats.byFailingLayer[l]}`] : []))
                  .join(", ")
              : "—"}
          </Cell>
          <Cell>{r.stats?.marginKept ? r.stats.marginKept.median.toFixed(3) : "—"}</Cell>
        </tr>
      ))}
    </StatTable>
  );
}

/** `experimentId` (the signed-in report) links each round to the pair browser; the share page passes none. */
export function DpoReport({ report, experimentId }: { report: ExperimentReport; experimentId?: string }) {
  const section = report.dpo;
  if (!section) return null;
  // "RFT" for the sft+rft control: the same slot trained with the SFT term alone on the chosen answers.
  const three = dpoThreeWay(section);
  const arm = three.arm;
  return (
    <Section title={`Base, SFT and ${arm} (test, pairwise; 95% intervals clustered by source group)`}>
      <div className="space-y-4" data-testid="dpo-report">
        <ThreeWayTable section={three} testId="dpo" />
        <Explain>
          <p>{section.note}</p>
          <p>
            The SFT model is dev&apos;s best SFT epoch and the {arm} model dev&apos;s best {arm} epoch, each within its
            kind (a tie keeps the earlier); the experiment&apos;s own selection (base before SFT before {arm} on a tie)
            is the outcome above. Δ is B − A in percentage points.
          </p>
        </Explain>
        <div className="grid gap-5 lg:grid-cols-2">
          <div>
            <h3 className="mb-1 text-xs font-medium text-zinc-500">
              Dev pass@1 by {arm} epoch (selection: no inference)
            </h3>
            <ArmDevCurve report={report} section={three} series={dpoDevSeries(section.devPoints, arm)} testId="dpo" />
          </div>
          <div>
            <h3 className="mb-1 text-xs font-medium text-zinc-500">Preference pairs per round (train tasks only)</h3>
            <Rounds section={section} experimentId={experimentId} />
          </div>
        </div>
      </div>
    </Section>
  );
}
