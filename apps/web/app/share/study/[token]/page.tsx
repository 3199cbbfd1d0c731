"use client";

import { use } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../../_lib/trpc";
import { CopyButton } from "../../../_components/CopyButton";
import { DevCurves } from "../../../_components/DevCurves";
import { StateBadge } from "../../../_components/StatusBadges";
import { Section } from "../../../_components/PageHeader";
import { Table } from "../../../_components/Table";
import { StudyLedger, StudyReportSections, armColumns } from "../../../studies/StudyReportSections";
import { DeadLink } from "../../DeadLink";

/** Public, read-only: the one study this token opens (arms, test claim, report), with no workspace chrome. */
export default function StudySharePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = use(params);
  const trpc = useTRPC();
  const q = useQuery(trpc.share.study.queryOptions({ token }, { retry: false }));
  if (q.error) return <DeadLink message={q.error.message} opens="a study" />;
  if (!q.data) return <p className="text-sm text-zinc-500">Loading…</p>;
  const { study: s, expiresAt } = q.data;
  const expires = expiresAt ? new Date(expiresAt).toLocaleString() : null;
  return (
    <div className="mx-auto max-w-5xl">
      <p className="mb-3 text-xs uppercase tracking-wide text-zinc-400">agentlab · shared study (read-only)</p>
      <h1 className="mb-1 flex items-center gap-2 text-2xl font-semibold">
        {s.name} <StateBadge state={s.state} />
      </h1>
      <p className="mb-4 flex flex-wrap items-center gap-2 text-sm text-zinc-500">
        <span>Created {new Date(s.createdAt).toLocaleString()}</span>
        <span>·</span>
        <span data-testid="share-expiry">{expires ? `link expires ${expires}` : "link does not expire"}</span>
        <CopyButton text={typeof window === "undefined" ? "" : window.location.href} label="Copy link" />
      </p>
      {s.state === "failed" ? (
        <p role="status" className="mb-4 text-sm text-red-800">
          This study ended without a report: an arm stopped before its test evaluation finished.
        </p>
      ) : null}
      <Section title="Arms" className="mb-4">
        <Table bare rows={s.arms} rowKey={(a) => a.name} columns={armColumns()} />
      </Section>
      <div className="mb-4">
        <DevCurves curves={s.arms} what="arm" testId="study-arm-curves" />
      </div>
      <StudyLedger claim={s.testClaim} arms={s.arms.length} report={s.report} />
      {s.report ? <StudyReportSections r={s.report} /> : null}
    </div>
  );
}
