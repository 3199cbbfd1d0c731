"use client";

import { use } from "react";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "../../_lib/trpc";
import { ErrorBox } from "../../_components/ErrorBox";
import { PageHeader } from "../../_components/PageHeader";
import { ReportView } from "../ReportView";
import { ShareLinks } from "../ShareLinks";

export default function ReportPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  const trpc = useTRPC();
  const client = useTRPCClient();
  const q = useQuery(trpc.reports.byId.queryOptions({ id }));
  const download = async (format: "json" | "csv" | "markdown") => {
    const r = await client.reports.export.query({ id, format });
    const url = URL.createObjectURL(new Blob([r.content], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `report-${id}.${format === "markdown" ? "md" : format}`;
    a.click();
    URL.revokeObjectURL(url);
  };
  if (q.error) return <ErrorBox error={q.error} />;
  if (!q.data) return <p>Loading…</p>;
  return (
    <div className="space-y-4">
      <PageHeader
        title={q.data.report.name}
        description={
          <>
            Report of{" "}
            <Link href={`/experiments/${q.data.experimentId}`} className="text-blue-700 hover:underline">
              the experiment
            </Link>
            , built {new Date(q.data.report.generatedAt).toLocaleString()}
          </>
        }
        actions={(["json", "csv", "markdown"] as const).map((f) => (
          <button key={f} className="rounded border px-2 py-1 text-sm" onClick={() => void download(f)}>
            Export {f}
          </button>
        ))}
      />
      <ShareLinks reportId={id} />
      <ReportView report={q.data.report} reportId={id} />
    </div>
  );
}
