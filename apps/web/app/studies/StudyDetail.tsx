"use client";

import { useQuery } from "@tanstack/react-query";
import type { StudyReport } from "@agentlab/core";
import { Button } from "../_components/Button";
import { DevCurves } from "../_components/DevCurves";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { ProgressBar } from "../_components/ProgressBar";
import { StateBadge } from "../_components/StatusBadges";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { ShareLinks } from "../reports/ShareLinks";
import { StudyLedger, StudyReportSections, armColumns } from "./StudyReportSections";

// One study: its arms (each an experiment), the one test claim, and once every arm is done the
// arms × metrics matrix and the Holm-adjusted contrasts. Non-significant reads as such.

function download(report: StudyReport) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(report, null, 2)], { type: "application/json" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `study-${report.studyId}.json`;
  a.click();
  URL.revokeObjectURL(url);
}

export function StudyDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.studies.byId.queryOptions(
      { id },
      { refetchInterval: (s) => (s.state.data?.report || s.state.data?.state === "failed" ? false : 5_000) },
    ),
  );
  if (q.error) return <ErrorBox error={q.error} onRetry={() => void q.refetch()} />;
  const s = q.data;
  if (!s) return <p className="text-sm text-zinc-500">Loading…</p>;
  const report = s.report;
  return (
    <div>
      <PageHeader
        title={s.name}
        description="Arms share the split, base model, evaluation protocol and seeds; one test claim covers them all."
        meta={<StateBadge state={s.state} />}
        actions={report ? <Button onClick={() => download(report)}>Export JSON</Button> : null}
      />
      {s.state === "failed" ? (
        <div role="alert" className="mb-4 rounded-md border border-red-200 bg-red-50 px-3 py-2.5 text-sm text-red-800">
          <p className="font-medium">This study ended without a report</p>
          <p className="mt-0.5 break-words">{s.error ?? "an arm stopped before its test evaluation finished"}</p>
        </div>
      ) : null}
      <Section title="Arms" className="mb-4">
        <Table
          bare
          rows={s.arms}
          rowKey={(a) => a.name}
          rowHref={(a) => `/experiments/${a.experimentId}`}
          columns={[
            ...armColumns<(typeof s.arms)[number]>(),
            {
              key: "progress",
              header: "Progress",
              cell: (a) => (
                <ProgressBar
                  value={a.progress}
                  label={
                    a.waitingForStudyClaim ? "dev selection frozen; waiting for the study's test claim" : undefined
                  }
                />
              ),
            },
          ]}
        />
      </Section>
      <div className="mb-4">
        <DevCurves curves={s.arms} what="arm" testId="study-arm-curves" />
      </div>
      <StudyLedger claim={s.testClaim} arms={s.arms.length} report={report} />
      {report ? <StudyReportSections r={report} linkArms /> : null}
      <Section title="Share" className="mb-4">
        <div className="px-4 py-3">
          <ShareLinks studyId={s.id} />
        </div>
      </Section>
    </div>
  );
}
