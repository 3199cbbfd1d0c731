"use client";

import { useQuery } from "@tanstack/react-query";
import type { ClusterProposals as Proposals } from "@agentlab/core";
import { Badge } from "../_components/Badge";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";

// Tasks of several source groups sharing one reference: not independent units for inference. The
// proposal is a name to declare as `cluster` in the task file (docs/task-format.md).

type Row = Proposals["proposals"][number];

export function ClusterProposalsTable({ proposals }: { proposals: Proposals }) {
  return (
    <>
      <p className="mb-3 text-sm text-zinc-600">
        {proposals.total === 0
          ? "No reference is shared across source groups."
          : `${proposals.total} famil${proposals.total === 1 ? "y" : "ies"} of tasks in different source groups share one reference answer (identical or near-identical): declare a cluster for each in the task file, or the report counts them as independent units.`}
        {proposals.total > proposals.proposals.length ? ` The ${proposals.proposals.length} largest are listed.` : ""}
      </p>
      <Table<Row>
        bare
        rows={proposals.proposals}
        rowKey={(r) => r.cluster}
        empty={<Badge tone="green">No cluster to propose</Badge>}
        columns={[
          {
            key: "cluster",
            header: "Proposed cluster",
            cell: (r) => <span className="font-mono text-xs">{r.cluster}</span>,
          },
          { key: "tasks", header: "Tasks", className: "tabular-nums", cell: (r) => r.tasks },
          { key: "groups", header: "Source groups", className: "tabular-nums", cell: (r) => r.groups },
          {
            key: "sample",
            header: "Tasks (sample)",
            cell: (r) => <span className="font-mono text-xs">{r.sampleTaskIds.join(", ")}</span>,
          },
        ]}
      />
    </>
  );
}

export function ClusterProposals({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.pools.clusterProposals.queryOptions({ poolId }));
  return (
    <Section title="Shared answers (cluster proposals)">
      {q.error ? <ErrorBox error={q.error} /> : null}
      {q.data ? <ClusterProposalsTable proposals={q.data} /> : <p className="text-sm text-zinc-500">Loading…</p>}
    </Section>
  );
}
