"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { JobState, JobType } from "@agentlab/core/jobs/schemas";
import { ErrorBox } from "../_components/ErrorBox";
import { JobsTable } from "../_components/jobs/JobsTable";
import { PageHeader } from "../_components/PageHeader";
import { useTRPC } from "../_lib/trpc";

const LIMITS = [50, 100, 200, 500] as const;

export function JobsView() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const stateParam = JobState.safeParse(params.get("state"));
  const typeParam = JobType.safeParse(params.get("type"));
  const state = stateParam.success ? stateParam.data : undefined;
  const type = typeParam.success ? typeParam.data : undefined;
  const limitRaw = Number(params.get("limit"));
  const limit = LIMITS.find((l) => l === limitRaw) ?? 100;
  const auto = params.get("refresh") !== "off";
  const experimentId = /^[0-9a-f-]{36}$/.test(params.get("experiment") ?? "")
    ? (params.get("experiment") ?? undefined)
    : undefined;
  // Paging: `before` is the creation time of the last row of the previous page (older jobs next).
  const beforeRaw = params.get("before");
  const before = beforeRaw && !Number.isNaN(Date.parse(beforeRaw)) ? beforeRaw : undefined;

  // Filters live in the URL so a filtered view can be linked and survives reloads.
  const setParam = (key: string, value: string | null) => {
    const next = new URLSearchParams(params.toString());
    if (value === null) next.delete(key);
    else next.set(key, value);
    const qs = next.toString();
    router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
  };

  const interval = auto ? 2_000 : false;
  const jobs = useQuery(
    trpc.jobs.list.queryOptions(
      { state, type, limit, experimentId, before },
      { refetchInterval: interval, placeholderData: (prev) => prev },
    ),
  );
  const runs = useQuery(trpc.runs.list.queryOptions({ limit: 200 }, { staleTime: 30_000 }));
  const rows = jobs.data ?? [];
  const oldest = rows.at(-1)?.createdAt;
  const counts = useQuery(trpc.jobs.counts.queryOptions(undefined, { refetchInterval: interval }));
  const agents = useQuery(trpc.agents.list.queryOptions(undefined, { staleTime: 30_000 }));
  const byState = new Map((counts.data ?? []).map((c) => [c.state, c.n]));
  const total = [...byState.values()].reduce((a, b) => a + b, 0);

  const tab = (value: string | undefined, label: string, n: number) => {
    const active = value === state;
    return (
      <button
        key={label}
        type="button"
        onClick={() => setParam("state", value ?? null)}
        aria-pressed={active}
        className={`inline-flex items-center gap-1.5 rounded-md px-2.5 py-1 text-[13px] font-medium ${active ? "bg-zinc-900 text-white" : "text-zinc-600 hover:bg-zinc-100"}`}
      >
        {label}
        <span className={`tabular-nums text-xs ${active ? "text-zinc-300" : "text-zinc-400"}`}>{n}</span>
      </button>
    );
  };

  const select = "h-7 rounded-md border border-zinc-300 bg-white px-2 text-xs text-zinc-700";
  return (
    <div className="space-y-4">
      <PageHeader
        title="Jobs"
        description="The queue: every grading, training, generation and shell job, with its attempts."
        actions={
          <label className="inline-flex cursor-pointer items-center gap-1.5 text-xs text-zinc-600">
            <input
              type="checkbox"
              checked={auto}
              onChange={(e) => setParam("refresh", e.target.checked ? null : "off")}
            />
            Auto-refresh
            {auto && jobs.isFetching ? <span className="size-1.5 animate-pulse rounded-full bg-blue-500" /> : null}
          </label>
        }
      />
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="flex flex-wrap gap-1" role="group" aria-label="Filter by state">
          {tab(undefined, "All", total)}
          {JobState.options.map((s) => tab(s, s, byState.get(s) ?? 0))}
        </div>
        <div className="flex items-center gap-2">
          <select
            aria-label="Experiment"
            className={select}
            value={experimentId ?? ""}
            onChange={(e) => setParam("experiment", e.target.value || null)}
          >
            <option value="">all experiments</option>
            {(runs.data?.rows ?? []).map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
          <select
            aria-label="Job type"
            className={select}
            value={type ?? ""}
            onChange={(e) => setParam("type", e.target.value || null)}
          >
            <option value="">all types</option>
            {JobType.options.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <select
            aria-label="Rows"
            className={select}
            value={limit}
            onChange={(e) => setParam("limit", e.target.value === "100" ? null : e.target.value)}
          >
            {LIMITS.map((l) => (
              <option key={l} value={l}>
                latest {l}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorBox error={jobs.error} title="Could not load jobs" onRetry={() => void jobs.refetch()} />
      {jobs.isPending ? (
        <div className="h-40 animate-pulse rounded-lg border border-zinc-200 bg-white" />
      ) : (
        <JobsTable jobs={rows} agents={agents.data ?? []} />
      )}
      <div className="flex items-center justify-between text-xs text-zinc-600">
        <span data-testid="jobs-shown">
          {rows.length} job{rows.length === 1 ? "" : "s"} shown
          {before ? ` created before ${new Date(before).toLocaleString()}` : ""}
          {!state && !type && !experimentId && !before ? ` of ${total}` : ""}
          {rows.length === limit ? " — more are older" : ""}
        </span>
        <span className="flex gap-2">
          {before ? (
            <button type="button" className="underline" onClick={() => setParam("before", null)}>
              Newest
            </button>
          ) : null}
          {rows.length === limit && oldest ? (
            <button
              type="button"
              className="underline"
              onClick={() => setParam("before", new Date(oldest).toISOString())}
            >
              Older
            </button>
          ) : null}
        </span>
      </div>
    </div>
  );
}
