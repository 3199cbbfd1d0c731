"use client";

import { use } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { ReportView } from "../../reports/ReportView";
import { CopyButton } from "../../_components/CopyButton";
import { DeadLink } from "../DeadLink";

/** Public, read-only: the one report this token opens, with no workspace chrome around it. */
export default function SharePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = use(params);
  const trpc = useTRPC();
  const q = useQuery(trpc.share.view.queryOptions({ token }, { retry: false }));
  if (q.error) return <DeadLink message={q.error.message} />;
  if (!q.data) return <p className="text-sm text-zinc-500">Loading…</p>;
  const expires = q.data.expiresAt ? new Date(q.data.expiresAt).toLocaleString() : null;
  return (
    <div className="mx-auto max-w-5xl">
      <p className="mb-3 text-xs uppercase tracking-wide text-zinc-400">agentlab · shared report (read-only)</p>
      <h1 className="mb-1 text-2xl font-semibold">{q.data.report.name}</h1>
      {/* Read-only: the same facts as the report page, without links into the workspace or the task answers. */}
      <p className="mb-4 flex flex-wrap items-center gap-2 text-sm text-zinc-500">
        <span>Built {new Date(q.data.report.generatedAt).toLocaleString()}</span>
        <span>·</span>
        <span data-testid="share-expiry">{expires ? `link expires ${expires}` : "link does not expire"}</span>
        <CopyButton text={typeof window === "undefined" ? "" : window.location.href} label="Copy link" />
      </p>
      <ReportView report={q.data.report} />
    </div>
  );
}
