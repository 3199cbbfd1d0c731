"use client";

import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { RunSortKey } from "@agentlab/core/experiments/runs";
import { EXPERIMENT_STATES } from "@agentlab/core/experiments/stages";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader } from "../_components/PageHeader";
import { StateBadge } from "../_components/StatusBadges";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { duration, interval, pValue, pct, pp } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { PAGE_SIZE, pageLabel, toggleSort, viewFromParams, viewToInput, viewToParams, type RunsView } from "./runs";

const select = "h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm";

/** The experiments list as a runs table: figures from each report, sort, filter, tags, paging, and a compare selection. */
export function ExperimentsView() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const view = viewFromParams(new URLSearchParams(useSearchParams()?.toString() ?? ""));
  const canCreate = canAct(useViewer(), "member");
  const [picked, setPicked] = useState<string[]>([]);
  const [q, setQ] = useState(view.q);
  const list = useQuery(
    trpc.runs.list.queryOptions(viewToInput(view), { refetchInterval: 5_000, placeholderData: keepPreviousData }),
  );
  const tags = useQuery(trpc.runs.tags.queryOptions());
  const go = (v: RunsView) => {
    const qs = viewToParams(v);
    router.replace(qs ? `${pathname}?${qs}` : pathname);
  };
  const rows = list.data?.rows ?? [];
  const total = list.data?.total ?? 0;
  const pickedRows = rows.filter((r) => picked.includes(r.id));
  const sameSplit = new Set(pickedRows.map((r) => r.splitId)).size <= 1;
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const sortHeader = (key: RunSortKey, label: string) => (
    <button
      type="button"
      className="inline-flex items-center gap-0.5 uppercase hover:text-zinc-900"
      onClick={() => go(toggleSort(view, key))}
      aria-label={`sort by ${label}`}
    >
      {label}
      <span aria-hidden className="text-zinc-400">
        {view.sort === key ? (view.dir === "asc" ? "▲" : "▼") : ""}
      </span>
    </button>
  );
  const filtered = Boolean(view.q || view.state || view.outcome || view.tag || view.archived);

  return (
    <div className="space-y-4">
      <PageHeader
        title="Experiments"
        description="Every run with its test result: pass@1 of the base and the adapter on the frozen test split, Δ with its interval and p."
        actions={
          <>
            <Button
              disabled={picked.length < 2 || !sameSplit}
              title={sameSplit ? "pick two or more runs on the same split" : "the picked runs use different splits"}
              onClick={() => router.push(`/experiments/compare?ids=${picked.join(",")}`)}
            >
              Compare {picked.length ? `(${picked.length})` : ""}
            </Button>
            {canCreate ? (
              <Link
                href="/experiments/new"
                className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white"
              >
                New experiment
              </Link>
            ) : null}
          </>
        }
      />
      <form
        className="flex flex-wrap items-center gap-2"
        role="search"
        onSubmit={(e) => (e.preventDefault(), go({ ...view, q, page: 0 }))}
      >
        <input
          className={`${select} w-64`}
          name="q"
          placeholder="search name, base model, notes"
          value={q}
          onChange={(e) => setQ(e.target.value)}
        />
        <select
          className={select}
          name="state"
          aria-label="state"
          value={view.state}
          onChange={(e) => go({ ...view, state: e.target.value, page: 0 })}
        >
          <option value="">any state</option>
          {EXPERIMENT_STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <select
          className={select}
          name="outcome"
          aria-label="outcome"
          value={view.outcome}
          onChange={(e) => go({ ...view, outcome: e.target.value, page: 0 })}
        >
          <option value="">any outcome</option>
          <option value="adapter_selected">adapter selected</option>
          <option value="base_kept">base kept</option>
        </select>
        <select
          className={select}
          name="tag"
          aria-label="tag"
          value={view.tag}
          onChange={(e) => go({ ...view, tag: e.target.value, page: 0 })}
        >
          <option value="">any tag</option>
          {(tags.data ?? []).map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <label className="flex items-center gap-1 text-sm text-zinc-600">
          <input
            type="checkbox"
            checked={view.archived}
            onChange={(e) => go({ ...view, archived: e.target.checked, page: 0 })}
          />{" "}
          archived
        </label>
        <Button type="submit" size="sm">
          Search
        </Button>
        {filtered ? (
          <Button
            size="sm"
            variant="ghost"
            onClick={() => (
              setQ(""), go({ ...view, q: "", state: "", outcome: "", tag: "", archived: false, page: 0 })
            )}
          >
            Clear
          </Button>
        ) : null}
      </form>
      <ErrorBox error={list.error} onRetry={() => void list.refetch()} />
      <Table
        rows={rows}
        rowKey={(e) => e.id}
        rowHref={(e) => `/experiments/${e.id}`}
        empty={
          filtered ? (
            <EmptyState
              title="No run matches these filters"
              action={
                <Button
                  onClick={() => (
                    setQ(""), go({ ...view, q: "", state: "", outcome: "", tag: "", archived: false, page: 0 })
                  )}
                >
                  Clear the filters
                </Button>
              }
            />
          ) : (
            <EmptyState
              title="No experiments yet"
              action={
                canCreate ? (
                  <Link className="text-sm font-medium text-blue-700 underline" href="/experiments/new">
                    Start the first experiment
                  </Link>
                ) : null
              }
            >
              An experiment needs a frozen split and a teacher provider (or an SFT dataset). The overview&apos;s
              checklist shows what is missing.
            </EmptyState>
          )
        }
        columns={[
          {
            key: "pick",
            header: <span className="sr-only">compare</span>,
            cell: (e) => (
              <input
                type="checkbox"
                aria-label={`compare ${e.name}`}
                checked={picked.includes(e.id)}
                onChange={() => toggle(e.id)}
              />
            ),
          },
          {
            key: "name",
            header: sortHeader("name", "Experiment"),
            cell: (e) => (
              <div className="max-w-72" title={e.notes || undefined}>
                <span className="font-medium">{e.name}</span>
                <div className="mt-0.5 text-xs text-zinc-500">
                  {e.poolName} / {e.splitName}
                </div>
                {e.tags.length ? (
                  <div className="mt-1 flex flex-wrap gap-1">
                    {e.tags.map((t) => (
                      <Badge key={t} tone="violet">
                        {t}
                      </Badge>
                    ))}
                  </div>
                ) : null}
                {e.error ? <div className="mt-0.5 truncate text-xs text-red-700">{e.error}</div> : null}
              </div>
            ),
          },
          { key: "state", header: sortHeader("state", "State"), cell: (e) => <StateBadge state={e.state} /> },
          {
            key: "outcome",
            header: sortHeader("outcome", "Outcome"),
            cell: (e) =>
              e.outcome ? (
                <Badge tone={e.outcome === "adapter_selected" ? "blue" : "neutral"}>
                  {e.outcome === "adapter_selected" ? "adapter" : "base kept"}
                </Badge>
              ) : (
                <span className="text-zinc-400">—</span>
              ),
          },
          {
            key: "base",
            header: sortHeader("testBase", "Test base"),
            className: "text-right tabular-nums",
            cell: (e) => pct(e.testBase),
          },
          {
            key: "sft",
            header: sortHeader("testSft", "Test adapter"),
            className: "text-right tabular-nums",
            cell: (e) => pct(e.testSft),
          },
          {
            key: "delta",
            header: sortHeader("delta", "Δ [interval]"),
            className: "text-right tabular-nums",
            cell: (e) =>
              e.delta === null ? (
                <span className="text-zinc-400">—</span>
              ) : (
                <span className={e.significant ? "font-semibold" : ""}>
                  {pp(e.delta)} <span className="text-xs text-zinc-500">{interval(e.ciLo, e.ciHi)}</span>
                </span>
              ),
          },
          { key: "p", header: sortHeader("p", "p"), className: "text-right tabular-nums", cell: (e) => pValue(e.p) },
          {
            key: "model",
            header: sortHeader("baseModel", "Base model"),
            cell: (e) => <span className="font-mono text-xs">{e.baseModel ?? "—"}</span>,
          },
          {
            key: "samples",
            header: sortHeader("samples", "Data"),
            className: "text-right tabular-nums",
            cell: (e) => (e.samples === null ? "—" : `${e.samples} samples`),
          },
          {
            key: "dur",
            header: sortHeader("durationMs", "Duration"),
            className: "text-right tabular-nums",
            cell: (e) => duration(e.durationMs),
          },
          { key: "at", header: sortHeader("createdAt", "Created"), cell: (e) => <Ago at={e.createdAt} /> },
        ]}
      />
      <div className="flex items-center justify-between text-sm text-zinc-600">
        <span data-testid="runs-total">{pageLabel(view.page, rows.length, total)}</span>
        <div className="flex gap-2">
          <Button size="sm" disabled={view.page === 0} onClick={() => go({ ...view, page: view.page - 1 })}>
            Previous
          </Button>
          <Button
            size="sm"
            disabled={(view.page + 1) * PAGE_SIZE >= total}
            onClick={() => go({ ...view, page: view.page + 1 })}
          >
            Next
          </Button>
        </div>
      </div>
    </div>
  );
}
