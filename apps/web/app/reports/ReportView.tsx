"use client";

import { answerContaminated, CONTAMINATED_NOTE, type ExperimentReport } from "@agentlab/core";
import { LineChart, type Marker, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { Checks } from "./Checks";
import { ReportHeaderView } from "./ReportHeader";
import { Explain, SeedsTable, SelectionTable, SummaryTable } from "./StatsTables";
import { SamplesSection } from "./SamplesSection";
import { TaskViewSection } from "./TaskViewSection";
import { DpoReport } from "./DpoSection";
import { GrpoReport } from "./GrpoSection";
import { AgenticReport } from "./AgenticSection";
import { TestReadsList } from "./TestReadsList";

/**
 * The report: what was compared, the outcome, the statistics with what they mean, the checks and
 * the per-task view. The report page passes its id (internal links, task answers and diffs); the
 * public share page passes none and shows the same facts without them.
 */
export function ReportView({ report, reportId }: { report: ExperimentReport; reportId?: string }) {
  const series: Series[] = [
    {
      name: "base",
      points: [0, ...report.devCurve.points.map((p) => p.epoch)].map((x) => ({ x, y: report.devCurve.base })),
      dashed: true,
    },
    ...[...new Set(report.devCurve.points.map((p) => p.seed))].map((seed) => ({
      name: `seed ${seed}`,
      points: [
        { x: 0, y: report.devCurve.base },
        ...report.devCurve.points.filter((p) => p.seed === seed).map((p) => ({ x: p.epoch, y: p.pass1 })),
      ],
    })),
  ];
  const sel = report.outcome.selected;
  const markers: Marker[] = sel.model === "adapter" ? [{ x: sel.epoch, label: "selected" }] : [];
  // Reports stored before version 2 hold McNemar-only figures this view no longer reads.
  if ((report as { version: number }).version !== 2)
    return (
      <p className="rounded border border-amber-400 bg-amber-50 p-3">
        This report was built by an earlier version; its statistics are not shown. Re-run the experiment&apos;s report
        stage to rebuild it.
      </p>
    );
  return (
    <div className="space-y-5">
      {report.disclaimer && (
        <p className="rounded border border-amber-400 bg-amber-50 p-3 font-semibold text-amber-900">
          {report.disclaimer}
        </p>
      )}
      {report.answerContamination && answerContaminated(report.answerContamination) && (
        <p
          className="rounded border border-red-400 bg-red-50 p-3 font-semibold text-red-800"
          data-testid="contaminated"
        >
          Contaminated: {CONTAMINATED_NOTE}
        </p>
      )}
      <div className="rounded-lg border border-zinc-200 bg-white p-4" data-testid="outcome">
        <p className="font-medium">{report.outcome.headline}</p>
        <p className="mt-1 text-sm text-zinc-600">{report.outcome.reason}</p>
      </div>
      {report.testReads && (
        <Section title="Test reads of this split">
          <TestReadsList
            reads={report.testReads}
            links={reportId !== undefined}
            currentExperimentId={report.experimentId}
          />
        </Section>
      )}
      <Section title="What was compared">
        <ReportHeaderView report={report} links={reportId !== undefined} />
      </Section>
      <Section title="Summary (pass@1; test: 95% intervals clustered by source group)">
        <SummaryTable report={report} />
      </Section>
      {report.dpo && (
        <DpoReport report={report} experimentId={reportId !== undefined ? report.header?.experiment.id : undefined} />
      )}
      <GrpoReport report={report} />
      <div className="grid gap-5 lg:grid-cols-2">
        <Section title="Dev selection">
          <SelectionTable report={report} />
        </Section>
        <Section title="Dev pass@1 by epoch">
          <div className="max-w-[640px]">
            <LineChart
              series={series}
              xLabel="epoch"
              yLabel="dev pass@1"
              yDomain={[0, 1]}
              markers={markers}
              height={240}
            />
          </div>
          <Explain>
            <p>
              Each line is one seed&apos;s adapter after each epoch, scored on the dev split (epoch 0 is the base); the
              dashed line is the base. The highest point, strictly above the base, is the one selected for test.
            </p>
          </Explain>
        </Section>
      </div>
      {report.samples && (
        <Section title={`Samples (${report.samples.samples} per task)`}>
          <SamplesSection samples={report.samples} />
        </Section>
      )}
      <AgenticReport report={report} />
      {report.seeds && (
        <Section title="Seeds (test, each seed's best dev epoch)">
          <SeedsTable seeds={report.seeds} />
        </Section>
      )}
      <Section title="Checks">
        <Checks report={report} />
      </Section>
      <Section title="Per task">
        <TaskViewSection report={report} reportId={reportId} />
      </Section>
    </div>
  );
}
