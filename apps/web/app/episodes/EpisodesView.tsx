"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader } from "../_components/PageHeader";
import { VerdictBadge } from "../_components/StatusBadges";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";

// Stored episodes, newest first: all of them, or those on the tasks of one experiment's or one
// collection's split (episodes carry their task, not who asked for them). `all` adds the
// continuations run from branch points.

export type EpisodeScope = { kind: "all" } | { kind: "experiment" | "collection" | "split"; id: string };

const scopeInput = (s: EpisodeScope) =>
  s.kind === "experiment"
    ? { experimentId: s.id }
    : s.kind === "collection"
      ? { collectionId: s.id }
      : s.kind === "split"
        ? { splitId: s.id }
        : {};

const hrefFor = (s: EpisodeScope, all: boolean) => {
  const q = new URLSearchParams();
  if (s.kind !== "all") q.set(s.kind, s.id);
  if (all) q.set("all", "1");
  const text = q.toString();
  return text ? `/episodes?${text}` : "/episodes";
};

function ScopePicker({ scope, all }: { scope: EpisodeScope; all: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const experiments = useQuery(trpc.experiments.list.queryOptions({ limit: 200 }));
  const collections = useQuery(trpc.collections.list.queryOptions({}));
  const value = scope.kind === "all" ? "" : `${scope.kind}:${scope.id}`;
  return (
    <div className="flex items-center gap-3 text-sm">
      <label className="flex items-center gap-2">
        <span className="text-zinc-500">Episodes of</span>
        <select
          aria-label="episode scope"
          className="rounded border border-zinc-300 px-2 py-1 text-sm"
          value={value}
          onChange={(e) => {
            const [kind, id] = e.target.value.split(":");
            const next: EpisodeScope =
              (kind === "experiment" || kind === "collection" || kind === "split") && id
                ? { kind, id }
                : { kind: "all" };
            router.push(hrefFor(next, all));
          }}
        >
          <option value="">every task</option>
          {scope.kind === "split" ? <option value={value}>split {scope.id.slice(0, 8)}</option> : null}
          {(experiments.data ?? []).map((e) => (
            <option key={e.id} value={`experiment:${e.id}`}>
              experiment {e.name}
            </option>
          ))}
          {(collections.data ?? []).map((c) => (
            <option key={c.id} value={`collection:${c.id}`}>
              collection {c.name}
            </option>
          ))}
        </select>
      </label>
      <label className="flex items-center gap-1.5">
        <input type="checkbox" checked={all} onChange={(e) => router.push(hrefFor(scope, e.target.checked))} />
        with continuations
      </label>
    </div>
  );
}

export function EpisodesView({ scope, all }: { scope: EpisodeScope; all: boolean }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.episodes.list.queryOptions({ ...scopeInput(scope), all, limit: 500 }));
  return (
    <div>
      <PageHeader
        title="Episodes"
        description="Agentic repair episodes: a policy's tool calls on a workspace, the budget it used and the judge's verdict."
        actions={<ScopePicker scope={scope} all={all} />}
      />
      {list.error ? <ErrorBox error={list.error} onRetry={() => void list.refetch()} /> : null}
      <Table
        rows={list.data ?? []}
        rowKey={(r) => r.id}
        rowHref={(r) => `/episodes/${r.id}`}
        empty={
          <EmptyState title={list.isPending ? "Loading…" : "No episode here yet"}>
            Episodes are run by <code>episode</code> jobs; <code>agentlab episodes list</code> shows the same rows.
          </EmptyState>
        }
        columns={[
          {
            key: "id",
            header: "Episode",
            cell: (r) => (
              <Link href={`/episodes/${r.id}`} data-episode={r.id}>
                <Mono value={r.id} />
              </Link>
            ),
          },
          { key: "task", header: "Task", cell: (r) => <Mono value={r.taskKey} chars={40} /> },
          { key: "policy", header: "Policy", cell: (r) => r.policyName },
          { key: "seed", header: "Seed", cell: (r) => r.seed },
          { key: "kind", header: "Run", cell: (r) => (r.parentEpisodeId ? "continuation" : "main") },
          { key: "verdict", header: "Verdict", cell: (r) => <VerdictBadge verdict={r.verdict} /> },
          { key: "turns", header: "Turns", cell: (r) => `${r.turns} / ${r.budget.maxTurns}` },
          { key: "tests", header: "Test runs", cell: (r) => `${r.testRuns} / ${r.budget.maxTestRuns}` },
          {
            key: "submitted",
            header: "Submitted by",
            cell: (r) => (r.submittedBy === "budget" ? `budget (${r.exhausted ?? "?"})` : "policy"),
          },
          { key: "created", header: "Created", cell: (r) => new Date(r.createdAt).toISOString().slice(0, 16) },
        ]}
      />
    </div>
  );
}
