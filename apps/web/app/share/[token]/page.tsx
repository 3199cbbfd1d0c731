"use client";

import { use } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { ErrorBox } from "../../_components/ErrorBox";
import { ReportView } from "../../reports/ReportView";

/** Public, read-only: the one report this token opens. */
export default function SharePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = use(params);
  const trpc = useTRPC();
  const q = useQuery(trpc.share.view.queryOptions({ token }, { retry: false }));
  if (q.error) return <ErrorBox error={q.error} title="This link is invalid, revoked or expired" />;
  if (!q.data) return <p>Loading…</p>;
  return (
    <main className="mx-auto max-w-5xl p-6">
      <h1 className="mb-1 text-2xl font-semibold">{q.data.report.name}</h1>
      {/* Read-only: the same facts as the report page, without links into the workspace or the task answers. */}
      <p className="mb-4 text-sm text-zinc-500">
        Shared report, built {new Date(q.data.report.generatedAt).toLocaleString()}
      </p>
      <ReportView report={q.data.report} />
    </main>
  );
}
