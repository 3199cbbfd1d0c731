"use client";

import { useQuery } from "@tanstack/react-query";
import { ShellJobPayload } from "@agentlab/core/jobs/schemas";
import { StateBadge } from "../_components/Badge";
import { CodeViewer } from "../_components/CodeViewer";
import { EmptyState } from "../_components/EmptyState";
import { LineChart } from "../_components/LineChart";
import { Mono } from "../_components/Mono";
import { ProgressBar } from "../_components/ProgressBar";
import { Table, type Column } from "../_components/Table";
import { Ago } from "../_components/Time";
import { elapsed } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import type { ArtifactRow, AttemptRow } from "../_lib/types";
import { metricSeries, progressFraction, type ProgressData } from "./progress";

export function AttemptsTable({
  attempts,
  currentAttemptId,
  agentName,
  selected,
  onSelect,
}: {
  attempts: AttemptRow[];
  currentAttemptId: string | null;
  agentName: (id: string | null) => string;
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  const columns: Column<AttemptRow>[] = [
    {
      key: "n",
      header: "#",
      className: "w-px tabular-nums",
      cell: (a) => <span className="font-medium">{a.number}</span>,
    },
    {
      key: "outcome",
      header: "Outcome",
      className: "w-px",
      cell: (a) =>
        a.reason ? (
          <StateBadge state={a.reason} />
        ) : a.id === currentAttemptId ? (
          <StateBadge state="running" />
        ) : (
          <span className="text-zinc-400">—</span>
        ),
    },
    { key: "agent", header: "Agent", cell: (a) => <span className="text-zinc-700">{agentName(a.agentId)}</span> },
    {
      key: "exit",
      header: "Exit",
      className: "w-px tabular-nums",
      cell: (a) =>
        a.exitCode !== null ? a.exitCode : a.signal ? <span className="font-mono text-xs">{a.signal}</span> : "—",
    },
    {
      key: "error",
      header: "Error",
      cell: (a) =>
        a.error ? (
          <span className="line-clamp-2 text-xs text-red-700" title={a.error}>
            {a.error}
          </span>
        ) : (
          <span className="text-zinc-400">—</span>
        ),
    },
    { key: "started", header: "Started", className: "w-px", cell: (a) => <Ago at={a.startedAt} /> },
    {
      key: "took",
      header: "Took",
      className: "w-px whitespace-nowrap tabular-nums text-right",
      cell: (a) => elapsed(a.startedAt, a.finishedAt),
    },
    {
      key: "logs",
      header: "",
      className: "w-px whitespace-nowrap",
      cell: (a) =>
        a.id === selected ? (
          <span className="text-xs text-zinc-500">viewing logs</span>
        ) : (
          <button type="button" className="text-xs text-blue-700 hover:underline" onClick={() => onSelect(a.id)}>
            logs
          </button>
        ),
    },
  ];
  return (
    <Table
      bare
      columns={columns}
      rows={attempts}
      rowKey={(a) => a.id}
      rowClassName={(a) => (a.id === selected ? "bg-blue-50/40" : "")}
      empty={<p className="p-4 text-sm text-zinc-500">Not claimed by an agent yet.</p>}
    />
  );
}

export function ArtifactsTable({ artifacts }: { artifacts: ArtifactRow[] }) {
  const columns: Column<ArtifactRow>[] = [
    { key: "name", header: "Name", cell: (a) => <span className="font-mono text-[12px]">{a.name}</span> },
    { key: "kind", header: "Kind", className: "w-px", cell: (a) => a.kind },
    { key: "sha", header: "sha256", className: "w-px", cell: (a) => <Mono value={a.sha256} chars={12} copy /> },
    { key: "created", header: "Uploaded", className: "w-px", cell: (a) => <Ago at={a.createdAt} /> },
    {
      key: "dl",
      header: "",
      className: "w-px",
      cell: (a) => (
        <a className="text-xs text-blue-700 hover:underline" href={`/api/artifacts/${a.sha256}`} download={a.name}>
          download
        </a>
      ),
    },
  ];
  return (
    <Table
      bare
      columns={columns}
      rows={artifacts}
      rowKey={(a) => a.id}
      empty={<p className="p-4 text-sm text-zinc-500">No artifacts.</p>}
    />
  );
}

/** Shell jobs show their command line; every payload is also shown whole as JSON. */
export function PayloadView({ type, payload }: { type: string; payload: Record<string, unknown> }) {
  const shell = type === "shell" ? ShellJobPayload.safeParse(payload) : null;
  const json = JSON.stringify(payload, null, 2);
  return (
    <div className="space-y-3">
      {shell?.success ? (
        <CodeViewer
          language="bash"
          lineNumbers={false}
          code={[
            ...Object.entries(shell.data.env).map(([k, v]) => `${k}=${JSON.stringify(v)}`),
            shell.data.argv.map((a) => (/^[\w./:=@-]+$/.test(a) ? a : JSON.stringify(a))).join(" "),
          ].join(" \\\n  ")}
        />
      ) : null}
      <CodeViewer language="json" code={json} maxHeight={360} />
    </div>
  );
}

export function ProgressView({
  attemptId,
  latest,
  live,
}: {
  attemptId: string | null;
  latest: ProgressData | null;
  live: boolean;
}) {
  const trpc = useTRPC();
  const history = useQuery({
    ...trpc.jobs.progress.queryOptions({ attemptId: attemptId ?? "" }, { refetchInterval: live ? 3_000 : false }),
    enabled: Boolean(attemptId),
  });
  const fraction = progressFraction(latest);
  const { xKey, series } = metricSeries(history.data ?? []);
  const scalar = Object.entries(latest ?? {}).filter(([, v]) => typeof v !== "object" || v === null);
  if (!latest && series.length === 0)
    return <EmptyState title="No progress reported">This job has not reported progress.</EmptyState>;
  return (
    <div className="space-y-4">
      {fraction !== null || live ? (
        <ProgressBar value={fraction} label={live ? "Progress" : "Last reported progress"} />
      ) : null}
      {scalar.length ? (
        <div className="flex flex-wrap gap-x-5 gap-y-1 text-[13px]">
          {scalar.map(([k, v]) => (
            <span key={k}>
              <span className="text-zinc-500">{k}</span>{" "}
              <span className="font-medium tabular-nums text-zinc-900">
                {typeof v === "number" ? Number(v.toPrecision(6)) : String(v)}
              </span>
            </span>
          ))}
        </div>
      ) : null}
      {series.length ? (
        <LineChart
          series={series}
          xLabel={xKey}
          yLabel={series.length === 1 ? series[0]?.name : undefined}
          height={200}
        />
      ) : null}
    </div>
  );
}
