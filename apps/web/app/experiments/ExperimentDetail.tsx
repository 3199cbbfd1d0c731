"use client";

import Link from "next/link";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ratchetStages } from "./ratchet";
import { queueWaitText } from "../../client/queue-wait";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { ProgressBar } from "../_components/ProgressBar";
import { Stat } from "../_components/Stat";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { StateBadge } from "../_components/StatusBadges";
import { elapsed, timeLeftText, usd } from "../../client/format";
import { hasPreferenceHalf, modelLabel, type ModelRef } from "@agentlab/core";
import { StuckBanner } from "../agents/StuckBanner";
import { TrainingPanel } from "./TrainingPanel";
import { DpoPanel } from "./DpoPanel";
import { GrpoPanel } from "./GrpoPanel";
import { RecipeSection } from "./RecipeSection";
import { RunNotes } from "./RunNotes";

export function ExperimentDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const canAlter = canAct(useViewer(), "member");
  const exp = useQuery(
    trpc.experiments.byId.queryOptions(
      { id },
      {
        refetchInterval: (q) => (q.state.data && q.state.data.state !== "running" ? false : 2_000),
        structuralSharing: ratchetStages,
      },
    ),
  );
  const report = useQuery(
    trpc.reports.byExperiment.queryOptions(
      { experimentId: id },
      { refetchInterval: (q) => (q.state.data ? false : 3_000) },
    ),
  );
  // Teacher cost comes from the experiment's collection (tagged with its id by the collect stage).
  const collections = useQuery(
    trpc.collections.list.queryOptions(
      { experimentId: id },
      {
        refetchInterval: (q) =>
          q.state.data?.every((c) => ["done", "failed", "canceled", "stopped_budget"].includes(c.state)) &&
          q.state.data.length
            ? false
            : 3_000,
      },
    ),
  );
  const cancel = useMutation(trpc.experiments.cancel.mutationOptions({ onSuccess: () => void exp.refetch() }));
  const training = useQuery(
    trpc.runs.training.queryOptions({ id }, { refetchInterval: exp.data?.state === "running" ? 3_000 : false }),
  );
  const [openStage, setOpenStage] = useState<string | null>(null);
  const e = exp.data;
  if (exp.error) return <ErrorBox error={exp.error} />;
  if (!e) return <p className="text-sm text-zinc-500">Loading…</p>;
  const col = collections.data?.[0];
  const selected = (e.selection as { selected?: ModelRef; outcome?: string } | null)?.selected;
  const running = e.stages.find((s) => s.state === "running");
  const shown = e.stages.find((s) => s.key === (openStage ?? running?.key)) ?? null;
  const trainFraction = new Map((training.data ?? []).map((t) => [t.key, t.fraction]));
  const stageProgress = (s: (typeof e.stages)[number]): number => {
    // A train stage has one job: its trainer's steps say how far it is, the job count cannot.
    return s.kind === "train" && s.state === "running"
      ? Math.max(s.progress, trainFraction.get(s.key) ?? 0)
      : s.progress;
  };
  const fractions = e.stages.map(stageProgress);
  const overall = e.stages.length ? fractions.reduce((a, b) => a + b, 0) / e.stages.length : e.progress;

  return (
    <div className="space-y-5">
      <PageHeader
        title={e.name}
        meta={
          <>
            <StateBadge state={e.state} />
            <span className="font-mono text-xs">{e.config.baseModel.ref}</span>
          </>
        }
        actions={
          <div className="flex gap-2">
            {hasPreferenceHalf(e.config.method) ? (
              <Link
                href={`/experiments/${id}/pairs`}
                className="rounded-md border border-zinc-300 bg-white px-3 py-1.5 text-sm font-medium text-zinc-800"
                data-testid="pairs-link"
              >
                Preference pairs
              </Link>
            ) : null}
            {report.data ? (
              <Link
                href={`/reports/${report.data.id}`}
                className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white"
                data-testid="report-link"
              >
                Open report
              </Link>
            ) : null}
            {canAlter && e.state === "running" ? (
              <Button
                variant="danger"
                onClick={() =>
                  window.confirm(`Cancel "${e.name}"? Its unfinished jobs are canceled and it cannot be resumed.`) &&
                  cancel.mutate({ id })
                }
              >
                Cancel
              </Button>
            ) : null}
          </div>
        }
      />
      <ErrorBox error={cancel.error} />
      {e.error ? (
        <p className="rounded-md bg-red-50 p-3 text-sm text-red-800" role="alert">
          {e.error}
        </p>
      ) : null}
      <StuckBanner experimentId={id} enabled={e.state === "running"} />
      {e.overLength && e.overLength.count > 0 ? (
        <p className="rounded-md bg-amber-50 p-3 text-sm text-amber-900" data-testid="over-length">
          {e.overLength.count} training sample{e.overLength.count === 1 ? "" : "s"} longer than max length{" "}
          {e.overLength.maxLength} tokens with {e.overLength.model}&apos;s tokenizer (longest{" "}
          {e.overLength.longestTokens ?? "?"}) {e.overLength.count === 1 ? "was" : "were"} dropped before training:{" "}
          <span className="font-mono text-xs">{e.overLength.taskIds.join(", ")}</span>
        </p>
      ) : null}
      <div className="grid gap-3 sm:grid-cols-5">
        <Stat
          label="Progress"
          value={
            <ProgressBar
              value={Math.max(overall, e.progress)}
              label={`${e.stages.filter((s) => s.state === "succeeded").length} of ${e.stages.length} stages`}
            />
          }
          hint={
            e.remaining ? (
              <span data-testid="time-left" title={e.remaining.kind === "estimate" ? e.remaining.note : undefined}>
                {timeLeftText(e.remaining)}
              </span>
            ) : undefined
          }
        />
        <Stat
          label="Total time"
          value={<span data-testid="total-time">{elapsed(e.createdAt, e.finishedAt)}</span>}
          hint={e.finishedAt ? "created → finished" : "so far"}
        />
        <Stat
          label="Teacher cost"
          value={usd(col?.costUsd ?? 0)}
          hint={
            col
              ? `${col.reused} of ${col.samplesTotal} candidates reused (${usd(col.costSavedUsd)} saved)`
              : e.config.datasetId
                ? "existing dataset reused"
                : "not collected yet"
          }
          href={col ? `/collections/${col.id}` : undefined}
        />
        <Stat
          label="Seeds × epochs"
          value={`${e.config.seeds.length} × ${e.config.training.epochs}`}
          hint={`seeds ${e.config.seeds.join(", ")}`}
        />
        <Stat
          label="Selected on dev"
          value={selected ? modelLabel(selected) : "—"}
          hint={(e.selection as { outcome?: string } | null)?.outcome ?? "after dev evaluation"}
        />
      </div>
      <Section
        title="Stages"
        actions={
          <Link className="text-xs text-blue-700 underline" href={`/jobs?experiment=${id}`}>
            all jobs of this experiment
          </Link>
        }
      >
        <Table
          bare
          rows={e.stages}
          rowKey={(s) => s.key}
          onRowClick={(s) => setOpenStage(s.key)}
          rowClassName={(s) => (s.key === shown?.key ? "bg-blue-50/40" : "")}
          columns={[
            { key: "stage", header: "Stage", cell: (s) => <span className="font-mono text-xs">{s.key}</span> },
            { key: "state", header: "State", cell: (s) => <StateBadge state={s.state} /> },
            {
              key: "progress",
              header: "Progress",
              className: "w-56",
              cell: (s) =>
                s.queueWait ? (
                  // Nothing of it runs yet: what it waits for, not an empty bar.
                  <span className="text-xs text-zinc-600" data-testid="queue-wait">
                    {queueWaitText(s.queueWait)}
                  </span>
                ) : (
                  <ProgressBar
                    value={
                      s.state === "running" && s.jobCount === 0 ? null : (fractions[e.stages.indexOf(s)] ?? s.progress)
                    }
                    label={s.jobCount ? `${s.jobsDone} of ${s.jobCount} jobs done so far` : undefined}
                  />
                ),
            },
            {
              key: "time",
              header: "Duration",
              className: "tabular-nums",
              cell: (s) =>
                s.startedAt ? elapsed(s.startedAt, s.finishedAt) : <span className="text-zinc-400">—</span>,
            },
            {
              key: "error",
              header: "Error",
              cell: (s) => <span className="text-xs text-red-700">{s.error ?? ""}</span>,
            },
          ]}
        />
      </Section>
      {shown ? <StageDetail stage={shown} /> : null}
      <TrainingPanel experimentId={id} live={e.state === "running"} />
      {hasPreferenceHalf(e.config.method) ? (
        <DpoPanel experimentId={id} live={e.state === "running"} rft={e.config.method === "sft+rft"} />
      ) : null}
      {e.config.method === "sft+grpo" ? <GrpoPanel experimentId={id} live={e.state === "running"} /> : null}
      <RunNotes
        id={id}
        tags={e.tags}
        notes={e.notes}
        archived={e.archivedAt !== null}
        running={e.state === "running"}
        canAlter={canAlter}
      />
      <RecipeSection config={e.config} />
    </div>
  );
}

type Stage = {
  key: string;
  state: string;
  error: string | null;
  jobs: { id: string; state: string; error: string | null }[];
  jobCount: number;
};

/** The stage's jobs (each links to its page with attempts and the full log) and a live tail of one running job's log. */
function StageDetail({ stage }: { stage: Stage }) {
  const trpc = useTRPC();
  const live = stage.jobs.find((j) => j.state === "running") ?? stage.jobs.at(-1);
  const job = useQuery({
    ...trpc.jobs.byId.queryOptions(
      { id: live?.id ?? "00000000-0000-0000-0000-000000000000" },
      { refetchInterval: 3_000 },
    ),
    enabled: Boolean(live),
  });
  const attemptId = job.data?.attempts.at(-1)?.id;
  const logs = useQuery({
    ...trpc.jobs.logs.queryOptions(
      { attemptId: attemptId ?? "00000000-0000-0000-0000-000000000000", limit: 200 },
      { refetchInterval: 3_000 },
    ),
    enabled: Boolean(attemptId),
  });
  return (
    <Section title={`Stage ${stage.key}`}>
      <div className="grid gap-4 lg:grid-cols-2">
        <div>
          <h3 className="mb-1 text-xs font-medium text-zinc-500">Jobs ({stage.jobCount})</h3>
          <ul className="max-h-64 space-y-1 overflow-auto text-xs">
            {stage.jobs.map((j) => (
              <li key={j.id} className="flex items-center gap-2">
                <Link className="font-mono underline" href={`/jobs/${j.id}`}>
                  {j.id.slice(0, 8)}
                </Link>
                <StateBadge state={j.state} />
                <span className="truncate text-red-700">{j.error ?? ""}</span>
              </li>
            ))}
            {stage.jobs.length === 0 ? <li className="text-zinc-400">no jobs</li> : null}
          </ul>
          {stage.error ? <p className="mt-3 text-xs text-red-700">{stage.error}</p> : null}
        </div>
        <div>
          <h3 className="mb-1 text-xs font-medium text-zinc-500">
            Log {live ? <span className="font-mono">({live.id.slice(0, 8)})</span> : null}
          </h3>
          <pre className="h-80 overflow-auto rounded bg-zinc-900 p-2 text-xs text-zinc-100" data-testid="stage-log">
            {(logs.data ?? []).map((l) => l.data).join("") || "no log lines"}
          </pre>
        </div>
      </div>
    </Section>
  );
}
