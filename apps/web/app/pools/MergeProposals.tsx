"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";

type Status = "pending" | "accepted" | "rejected";

/** Near-duplicate tasks found across source groups: accepting merges the groups so a split keeps them together. */
export function MergeProposals({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<Status>("pending");
  const list = useQuery(trpc.pools.mergeProposals.queryOptions({ poolId, status }));
  const decide = useMutation(
    trpc.pools.decideMerge.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.pools.pathKey() }),
    }),
  );
  type Row = NonNullable<typeof list.data>[number];
  return (
    <Section
      title="Group merge proposals"
      actions={
        <select
          aria-label="Proposal status"
          className="h-7 rounded-md border border-zinc-300 bg-white px-2 text-xs"
          value={status}
          onChange={(e) => setStatus(e.target.value as Status)}
        >
          <option value="pending">pending</option>
          <option value="accepted">accepted</option>
          <option value="rejected">rejected</option>
        </select>
      }
    >
      {list.error ? <ErrorBox error={list.error} /> : null}
      {decide.error ? <ErrorBox error={decide.error} /> : null}
      <Table<Row>
        bare
        rows={list.data ?? []}
        rowKey={(p) => p.id}
        empty={<p className="text-sm text-zinc-500">No {status} proposals.</p>}
        columns={[
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
                    disabled={decide.isPending}
                    onClick={() => decide.mutate({ id: p.id, accept: true })}
                  >
                    Merge
                  </Button>
                  <Button
                    size="sm"
                    disabled={decide.isPending}
                    onClick={() => decide.mutate({ id: p.id, accept: false })}
                  >
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
