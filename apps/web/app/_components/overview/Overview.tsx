"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { JobState } from "@agentlab/core/jobs/schemas";
import { useHealth } from "../../_lib/health";
import { useTRPC } from "../../_lib/trpc";
import { Badge, StateBadge, toneFor } from "../Badge";
import { ErrorBox } from "../ErrorBox";
import { PageHeader, Section } from "../PageHeader";
import { Stat } from "../Stat";
import { Ago } from "../Time";
import { JobsTable } from "../jobs/JobsTable";
import { StuckBanner } from "../../agents/StuckBanner";
import { FirstRun } from "./FirstRun";

const barColor: Record<string, string> = {
  neutral: "bg-zinc-300",
  blue: "bg-blue-500",
  amber: "bg-amber-400",
  green: "bg-emerald-500",
  red: "bg-red-500",
  violet: "bg-violet-500",
};

export function Overview() {
  const trpc = useTRPC();
  const health = useHealth();
  const agents = useQuery(trpc.agents.list.queryOptions(undefined, { refetchInterval: 5_000 }));
  const counts = useQuery(trpc.jobs.counts.queryOptions(undefined, { refetchInterval: 3_000 }));
  const recent = useQuery(trpc.jobs.list.queryOptions({ limit: 10 }, { refetchInterval: 3_000 }));

  const byState = new Map((counts.data ?? []).map((c) => [c.state, c.n]));
  const total = [...byState.values()].reduce((a, b) => a + b, 0);
  const live = (agents.data ?? []).filter((a) => !a.revokedAt);
  const online = live.filter((a) => a.online);

  return (
    <div className="space-y-5">
      <PageHeader title="Overview" description="The control plane, its agents and the job queue at a glance." />
      <ErrorBox
        error={health.error ?? agents.error ?? counts.error ?? recent.error}
        title="Could not load the overview"
      />
      <StuckBanner enabled={(byState.get("queued") ?? 0) > 0} />
      <FirstRun />

      <div className="grid grid-cols-2 gap-3 md:grid-cols-5">
        <Stat
          label="Server"
          value={
            health.data ? (
              <Badge tone={health.data.status === "ok" ? "green" : "red"} dot>
                {health.data.status}
              </Badge>
            ) : (
              "…"
            )
          }
          hint={health.data ? `database ${health.data.database}` : health.isError ? "unreachable" : "checking"}
        />
        <Stat
          label="Agents online"
          value={health.data?.agentsOnline ?? online.length}
          hint={`${live.length} enrolled`}
          href="/agents"
        />
        <Stat
          label="Running"
          value={(byState.get("running") ?? 0) + (byState.get("canceling") ?? 0)}
          hint="jobs on agents"
          href="/jobs?state=running"
        />
        <Stat label="Queued" value={byState.get("queued") ?? 0} hint="waiting for an agent" href="/jobs?state=queued" />
        <Stat label="Failed" value={byState.get("failed") ?? 0} hint={`of ${total} jobs`} href="/jobs?state=failed" />
      </div>

      <Section title="Jobs by state">
        {total === 0 ? (
          <p className="text-sm text-zinc-500">No jobs yet.</p>
        ) : (
          <>
            <div className="flex h-2 w-full overflow-hidden rounded-full bg-zinc-100">
              {JobState.options.map((s) => {
                const n = byState.get(s) ?? 0;
                return n ? (
                  <div
                    key={s}
                    title={`${s}: ${n}`}
                    className={barColor[toneFor(s)]}
                    style={{ width: `${(n / total) * 100}%` }}
                  />
                ) : null;
              })}
            </div>
            <div className="mt-3 flex flex-wrap gap-x-5 gap-y-2">
              {JobState.options.map((s) => (
                <Link key={s} href={`/jobs?state=${s}`} className="flex items-center gap-2 text-[13px] hover:underline">
                  <StateBadge state={s} />
                  <span className="tabular-nums text-zinc-700">{byState.get(s) ?? 0}</span>
                </Link>
              ))}
            </div>
          </>
        )}
      </Section>

      <div className="grid gap-5 lg:grid-cols-[1fr_2fr]">
        <Section
          title="Agents"
          actions={
            <Link href="/agents" className="text-xs text-zinc-500 hover:text-zinc-800">
              All agents →
            </Link>
          }
        >
          {live.length === 0 ? (
            <p className="text-sm text-zinc-500">
              No agents enrolled. An admin can create an enrollment token on the Agents page.
            </p>
          ) : (
            <ul className="divide-y divide-zinc-100 text-[13px]">
              {live.map((a) => (
                <li key={a.id} className="flex items-center justify-between gap-2 py-1.5">
                  <span className="flex min-w-0 items-center gap-2">
                    <span className={`size-2 shrink-0 rounded-full ${a.online ? "bg-emerald-500" : "bg-zinc-300"}`} />
                    <span className="truncate font-medium text-zinc-800">{a.name}</span>
                    {a.drain ? <Badge tone="amber">draining</Badge> : null}
                  </span>
                  <span className="shrink-0 text-xs text-zinc-500">
                    {a.currentJobId ? (
                      <Link href={`/jobs/${a.currentJobId}`} className="text-blue-700 hover:underline">
                        running a job
                      </Link>
                    ) : a.online ? (
                      "idle"
                    ) : (
                      <>
                        seen <Ago at={a.lastHeartbeatAt} />
                      </>
                    )}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section
          title="Recent jobs"
          actions={
            <Link href="/jobs" className="text-xs text-zinc-500 hover:text-zinc-800">
              All jobs →
            </Link>
          }
        >
          <div className="-m-4">
            <JobsTable jobs={recent.data ?? []} agents={agents.data ?? []} compact bare />
          </div>
        </Section>
      </div>
    </div>
  );
}
