"use client";

import Link from "next/link";
import { elapsed } from "../../../client/format";
import { jobSummary, requirementSummary } from "../../_lib/jobs";
import type { AgentRow, JobRow } from "../../_lib/types";
import { StateBadge } from "../Badge";
import { EmptyState } from "../EmptyState";
import { Mono } from "../Mono";
import { Table, type Column } from "../Table";
import { Ago, useNow } from "../Time";

// The overview's narrow card keeps only what identifies a job and how it is going.
const COMPACT_HIDDEN = new Set(["reason", "agent", "started", "finished"]);

export function JobsTable({
  jobs,
  agents,
  compact = false,
  bare = false,
}: {
  jobs: JobRow[];
  agents: Pick<AgentRow, "id" | "name">[];
  compact?: boolean;
  bare?: boolean;
}) {
  const now = useNow(1_000);
  const agentName = new Map(agents.map((a) => [a.id, a.name]));
  const columns: Column<JobRow>[] = [
    {
      key: "state",
      header: "State",
      className: "w-px",
      cell: (j) => <StateBadge state={j.state} />,
    },
    {
      key: "job",
      header: "Job",
      cell: (j) => (
        <div className="min-w-0">
          <Link href={`/jobs/${j.id}`} className="font-medium text-zinc-900 hover:underline">
            {j.type}
          </Link>{" "}
          <Mono value={j.id} />
          {jobSummary(j) ? (
            <div className="max-w-[28rem] truncate font-mono text-[11px] text-zinc-500" title={jobSummary(j)}>
              {jobSummary(j)}
            </div>
          ) : null}
          {j.state === "queued" && requirementSummary(j) ? (
            <div className="text-[11px] text-amber-700">needs {requirementSummary(j)}</div>
          ) : null}
        </div>
      ),
    },
    {
      key: "reason",
      header: "Reason",
      className: "w-px",
      cell: (j) =>
        j.terminalReason && j.terminalReason !== "succeeded" ? (
          <StateBadge state={j.terminalReason} title={j.error ?? undefined} />
        ) : (
          <span className="text-zinc-400">—</span>
        ),
    },
    {
      key: "attempts",
      header: "Attempts",
      className: "w-px text-right tabular-nums",
      cell: (j) => (
        <span className={j.attempts > 1 ? "text-amber-700" : "text-zinc-700"}>
          {j.attempts}/{j.maxAttempts}
        </span>
      ),
    },
    {
      key: "agent",
      header: "Agent",

      cell: (j) =>
        j.agentId ? (
          <span className="text-zinc-700">{agentName.get(j.agentId) ?? <Mono value={j.agentId} />}</span>
        ) : (
          <span className="text-zinc-400">—</span>
        ),
    },
    { key: "created", header: "Created", className: "w-px", cell: (j) => <Ago at={j.createdAt} now={now} /> },
    { key: "started", header: "Started", className: "w-px", cell: (j) => <Ago at={j.startedAt} now={now} /> },
    { key: "finished", header: "Finished", className: "w-px", cell: (j) => <Ago at={j.finishedAt} now={now} /> },
    {
      key: "duration",
      header: "Duration",
      className: "w-px text-right tabular-nums",
      cell: (j) => (
        <span className="whitespace-nowrap text-zinc-600">
          {j.startedAt ? elapsed(j.startedAt, j.finishedAt, now) : "—"}
        </span>
      ),
    },
  ];
  return (
    <Table
      columns={compact ? columns.filter((c) => !COMPACT_HIDDEN.has(c.key)) : columns}
      rows={jobs}
      rowKey={(j) => j.id}
      rowHref={(j) => `/jobs/${j.id}`}
      bare={bare}
      empty={
        <EmptyState title="No jobs">
          Jobs appear here when something is enqueued: grading, training, generation or a shell command.
        </EmptyState>
      }
    />
  );
}
