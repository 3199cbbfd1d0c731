"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { Pager } from "../_components/Pager";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";

type Status = "pending" | "accepted" | "rejected";
const PAGE = 50;

/** Near-duplicate tasks found across source groups: accepting merges the groups so a split keeps them together. */
export function MergeProposals({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<Status>("pending");
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const list = useQuery(
    trpc.pools.mergeProposals.queryOptions(
      { poolId, status, offset, limit: PAGE },
      { placeholderData: keepPreviousData },
    ),
  );
  const settled = () => {
    setSelected(new Set());
    return queryClient.invalidateQueries({ queryKey: trpc.pools.pathKey() });
  };
  // Deciding the last proposals of the last page empties it: step back to the page that then ends the list.
  const decided = (n: number) => {
    const left = (list.data?.total ?? 0) - n;
    if (offset > 0 && offset >= left) setOffset(Math.max(0, Math.ceil(left / PAGE) - 1) * PAGE);
  };
  const decide = useMutation(
    trpc.pools.decideMerge.mutationOptions({ onSuccess: () => decided(1), onSettled: settled }),
  );
  const decideMany = useMutation(
    trpc.pools.decideMerges.mutationOptions({ onSuccess: (_r, v) => decided(v.ids.length), onSettled: settled }),
  );
  type Row = NonNullable<typeof list.data>["rows"][number];
  const rows = list.data?.rows ?? [];
  const pending = rows.filter((r) => r.status === "pending");
  const busy = decide.isPending || decideMany.isPending;
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <Section
      title="Group merge proposals"
      actions={
        <span className="flex items-center gap-3">
          <Pager
            offset={offset}
            limit={PAGE}
            total={list.data?.total ?? 0}
            onOffset={(o) => (setOffset(o), setSelected(new Set()))}
            testId="merge-proposals-shown"
          />
          <select
            aria-label="Proposal status"
            className="h-7 rounded-md border border-zinc-300 bg-white px-2 text-xs"
            value={status}
            onChange={(e) => (setStatus(e.target.value as Status), setOffset(0), setSelected(new Set()))}
          >
            <option value="pending">pending</option>
            <option value="accepted">accepted</option>
            <option value="rejected">rejected</option>
          </select>
        </span>
      }
    >
      {list.error ? <ErrorBox error={list.error} /> : null}
      {decide.error ? <ErrorBox error={decide.error} /> : null}
      {decideMany.error ? <ErrorBox title="Nothing decided" error={decideMany.error} /> : null}
      {pending.length > 0 ? (
        <div className="mb-2 flex items-center gap-2 text-xs text-zinc-600">
          <label className="flex items-center gap-1">
            <input
              type="checkbox"
              aria-label="Select all pending on this page"
              checked={pending.every((r) => selected.has(r.id))}
              onChange={(e) => setSelected(new Set(e.target.checked ? pending.map((r) => r.id) : []))}
            />
            all on this page
          </label>
          <Button
            size="sm"
            variant="primary"
            disabled={busy || selected.size === 0}
            onClick={() => decideMany.mutate({ ids: [...selected], accept: true })}
          >
            Merge {selected.size || ""} selected
          </Button>
          <Button
            size="sm"
            disabled={busy || selected.size === 0}
            onClick={() => decideMany.mutate({ ids: [...selected], accept: false })}
          >
            Reject {selected.size || ""} selected
          </Button>
        </div>
      ) : null}
      <Table<Row>
        bare
        rows={rows}
        rowKey={(p) => p.id}
        empty={<p className="text-sm text-zinc-500">No {status} proposals.</p>}
        columns={[
          {
            key: "pick",
            header: "",
            cell: (p) =>
              p.status === "pending" ? (
                <input
                  type="checkbox"
                  aria-label={`Select ${p.groupA} ⇐ ${p.groupB}`}
                  checked={selected.has(p.id)}
                  onChange={() => toggle(p.id)}
                />
              ) : null,
          },
          {
            key: "groups",
            header: "Groups",
            cell: (p) => (
              <span className="font-mono text-xs">
                {p.groupA} ⇐ {p.groupB}
              </span>
            ),
          },
          {
            key: "sim",
            header: "Similarity",
            className: "tabular-nums",
            cell: (p) => `${Math.round(p.similarity * 100)}%`,
          },
          {
            key: "pair",
            header: "Closest pair",
            cell: (p) => (
              <span className="font-mono text-xs">
                {p.taskA} ~ {p.taskB}
              </span>
            ),
          },
          { key: "pairs", header: "Pairs", className: "tabular-nums", cell: (p) => p.pairs },
          {
            key: "act",
            header: "",
            cell: (p) =>
              p.status === "pending" ? (
                <div className="flex gap-1">
                  <Button
                    size="sm"
                    variant="primary"
                    disabled={busy}
                    onClick={() => decide.mutate({ id: p.id, accept: true })}
                  >
                    Merge
                  </Button>
                  <Button size="sm" disabled={busy} onClick={() => decide.mutate({ id: p.id, accept: false })}>
                    Reject
                  </Button>
                </div>
              ) : (
                <Badge tone={p.status === "accepted" ? "green" : "neutral"}>{p.status}</Badge>
              ),
          },
        ]}
      />
    </Section>
  );
}
