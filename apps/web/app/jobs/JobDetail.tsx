"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { isTerminal } from "@agentlab/core/jobs/schemas";
import { requirementText } from "@agentlab/core/jobs/eligibility";
import { Badge, StateBadge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { CodeViewer } from "../_components/CodeViewer";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { Fields } from "../_components/Stat";
import { Ago, useNow } from "../_components/Time";
import { duration, elapsed, megabytes, timestamp } from "../../client/format";
import { jobSummary } from "../_lib/jobs";
import { httpStatusOf, useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { LogView } from "./LogView";
import { jobNeeds } from "./needs";
import { StuckBanner } from "../agents/StuckBanner";
import { ArtifactsTable, AttemptsTable, PayloadView, ProgressView } from "./JobSections";

export function JobDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const viewer = useViewer();
  const now = useNow(1_000);
  const [picked, setPicked] = useState<string | null>(null);
  const detail = useQuery(
    trpc.jobs.byId.queryOptions(
      { id },
      // Poll while anything can still change; a finished job is frozen, and a 4xx (no such job,
      // no access) will not heal by asking again.
      {
        refetchInterval: (q) => {
          const status = httpStatusOf(q.state.error);
          if (status !== null && status < 500) return false;
          return q.state.data && isTerminal(q.state.data.job.state) ? false : 1_500;
        },
      },
    ),
  );
  const agents = useQuery(trpc.agents.list.queryOptions(undefined, { staleTime: 30_000 }));
  const cancel = useMutation(
    trpc.jobs.cancel.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.jobs.byId.queryKey({ id }) }),
    }),
  );

  if (detail.isPending) return <div className="h-64 animate-pulse rounded-lg border border-zinc-200 bg-white" />;
  if (detail.error) {
    return (
      <div className="space-y-4">
        <PageHeader
          title="Job"
          description={
            <Link href="/jobs" className="hover:underline">
              ← All jobs
            </Link>
          }
        />
        <ErrorBox
          error={detail.error}
          title={httpStatusOf(detail.error) === 404 ? "No such job" : "Could not load the job"}
          onRetry={() => void detail.refetch()}
        />
      </div>
    );
  }

  const { job, attempts, artifacts, creator } = detail.data;
  const names = new Map((agents.data ?? []).map((a) => [a.id, a.name]));
  const agentName = (aid: string | null) => (aid ? (names.get(aid) ?? aid.slice(0, 8)) : "—");
  const live = !isTerminal(job.state);
  const latestAttempt = attempts.at(-1) ?? null;
  const logAttemptId = picked ?? job.currentAttemptId ?? latestAttempt?.id ?? null;
  const logAttempt = attempts.find((a) => a.id === logAttemptId) ?? null;
  const logLive = Boolean(logAttempt && !logAttempt.finishedAt && logAttempt.id === job.currentAttemptId);
  const cancellable = job.state === "queued" || job.state === "running";
  const summary = jobSummary(job);

  return (
    <div className="space-y-5">
      <PageHeader
        title={
          <span className="flex items-center gap-2">
            <span>{job.type} job</span>
            <Mono value={job.id} copy />
          </span>
        }
        description={
          <Link href="/jobs" className="hover:underline">
            ← All jobs
          </Link>
        }
        meta={
          <>
            <StateBadge state={job.state} />
            {job.terminalReason && job.terminalReason !== job.state ? <StateBadge state={job.terminalReason} /> : null}
            <span>
              created <Ago at={job.createdAt} now={now} />
            </span>
            {job.startedAt ? <span>· ran {elapsed(job.startedAt, job.finishedAt, now)}</span> : null}
          </>
        }
        actions={
          canAct(viewer, "member") && cancellable ? (
            <Button
              variant="danger"
              disabled={cancel.isPending}
              onClick={() => {
                if (
                  window.confirm("Cancel this job? A running process gets SIGTERM, then SIGKILL after a grace period.")
                )
                  cancel.mutate({ id: job.id });
              }}
            >
              {cancel.isPending ? "Canceling…" : "Cancel job"}
            </Button>
          ) : job.state === "canceling" ? (
            <Badge tone="amber" dot pulse>
              stopping the process tree…
            </Badge>
          ) : null
        }
      />
      <ErrorBox error={cancel.error} title="Could not cancel the job" />
      <StuckBanner jobId={job.id} enabled={job.state === "queued"} />
      {job.error ? (
        <div className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          <span className="font-medium">Error: </span>
          <span className="whitespace-pre-wrap break-words">{job.error}</span>
        </div>
      ) : null}

      <div className="grid gap-5 lg:grid-cols-[minmax(0,1fr)_minmax(0,1.4fr)]">
        <Section title="Details">
          <Fields
            items={[
              {
                label: "Command",
                value: summary ? <code className="break-all font-mono text-[12px]">{summary}</code> : "—",
              },
              { label: "Attempts", value: `${job.attempts} of ${job.maxAttempts}` },
              {
                label: "Agent",
                value: job.agentId ? (
                  <Link className="text-blue-700 hover:underline" href="/agents">
                    {agentName(job.agentId)}
                  </Link>
                ) : (
                  "—"
                ),
              },
              { label: "Priority", value: job.priority },
              {
                label: "Requires",
                value: (
                  <span className="flex flex-wrap gap-1">
                    {job.requiredLabels.map((l) => (
                      <Badge key={l} tone="blue">
                        {l}
                      </Badge>
                    ))}
                    {job.minGpus ? (
                      <Badge>
                        {job.minGpus} GPU{job.minGpus > 1 ? "s" : ""}
                      </Badge>
                    ) : null}
                    {job.minGpuMemoryMb ? <Badge>≥ {megabytes(job.minGpuMemoryMb)} GPU memory</Badge> : null}
                    {job.sandbox ? <Badge>sandbox {job.sandbox}</Badge> : null}
                    <span
                      className={
                        job.requiredLabels.length || job.minGpus || job.sandbox
                          ? "text-xs text-zinc-500"
                          : "text-zinc-700"
                      }
                    >
                      {requirementText(jobNeeds(job))}
                    </span>
                  </span>
                ),
              },
              { label: "Max duration", value: duration(job.maxDurationS * 1000) },
              { label: "Lease expires", value: job.leaseExpiresAt ? <Ago at={job.leaseExpiresAt} now={now} /> : "—" },
              { label: "Created", value: timestamp(job.createdAt) },
              {
                label: "Created by",
                value: creator ? creator.name : job.experimentId ? "the experiment runner" : "the server",
              },
              { label: "Started", value: timestamp(job.startedAt) },
              { label: "Finished", value: timestamp(job.finishedAt) },
              ...(job.experimentId
                ? [
                    {
                      label: "Experiment",
                      value: (
                        <Link className="text-blue-700 hover:underline" href={`/experiments/${job.experimentId}`}>
                          <Mono value={job.experimentId} />
                        </Link>
                      ),
                    },
                  ]
                : []),
              ...(job.dedupeKey
                ? [
                    {
                      label: "Dedupe key",
                      value: <code className="break-all font-mono text-[12px]">{job.dedupeKey}</code>,
                    },
                  ]
                : []),
            ]}
          />
        </Section>
        <Section title="Progress">
          <ProgressView
            attemptId={job.currentAttemptId ?? latestAttempt?.id ?? null}
            latest={job.progress}
            live={live && job.state !== "queued"}
          />
        </Section>
      </div>

      <Section title="Attempts">
        <div className="-m-4">
          <AttemptsTable
            attempts={attempts}
            currentAttemptId={job.currentAttemptId}
            agentName={agentName}
            selected={logAttemptId}
            onSelect={setPicked}
          />
        </div>
      </Section>

      <Section title={logAttempt ? `Log · attempt ${logAttempt.number}` : "Log"}>
        <LogView attemptId={logAttemptId} live={logLive} />
      </Section>

      <div className="grid gap-5 lg:grid-cols-2">
        <Section title="Payload">
          <PayloadView type={job.type} payload={job.payload} />
        </Section>
        <Section title="Result">
          {job.result ? (
            <CodeViewer language="json" code={JSON.stringify(job.result, null, 2)} maxHeight={360} />
          ) : (
            <p className="text-sm text-zinc-500">{live ? "Not finished yet." : "No result recorded."}</p>
          )}
        </Section>
      </div>

      <Section title={`Artifacts (${artifacts.length})`}>
        <div className="-m-4">
          <ArtifactsTable artifacts={artifacts} />
        </div>
      </Section>
    </div>
  );
}
