"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ShowArchived } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { UploadPanel } from "./UploadPanel";

export function PoolsView() {
  const trpc = useTRPC();
  const [includeArchived, setIncludeArchived] = useState(false);
  const pools = useQuery(trpc.pools.list.queryOptions({ includeArchived }));
  type Row = NonNullable<typeof pools.data>[number];
  return (
    <div className="space-y-4">
      <PageHeader
        title="Task pools"
        description="Task spec v1 pools: fingerprints, source groups, near-duplicate proposals and frozen splits."
        actions={<ShowArchived value={includeArchived} onChange={setIncludeArchived} />}
      />
      {pools.error ? <ErrorBox error={pools.error} onRetry={() => void pools.refetch()} /> : null}
      <Table<Row>
        rows={pools.data ?? []}
        rowKey={(p) => p.id}
        rowHref={(p) => `/pools/${p.id}`}
        empty={
          pools.isLoading ? null : (
            <EmptyState title="No pools yet">
              Import a Task spec v1 file below or with <code>npx agentlab tasks import FILE --pool NAME</code>.
            </EmptyState>
          )
        }
        columns={[
          {
            key: "name",
            header: "Pool",
            cell: (p) => (
              <span className="font-medium">
                {p.name} {p.builtin ? <Badge tone="violet">built-in</Badge> : null}{" "}
                {p.archivedAt ? <Badge tone="amber">archived</Badge> : null}
              </span>
            ),
          },
          {
            key: "tasks",
            header: "Tasks",
            className: "tabular-nums text-right",
            cell: (p) => p.taskCount.toLocaleString(),
          },
          {
            key: "groups",
            header: "Groups",
            className: "tabular-nums text-right",
            cell: (p) => p.groupCount.toLocaleString(),
          },
          {
            key: "dups",
            header: "Exact dups",
            className: "tabular-nums text-right",
            cell: (p) => p.exactDuplicateTasks,
          },
          {
            key: "merges",
            header: "Pending merges",
            className: "tabular-nums text-right",
            cell: (p) => (p.pendingMerges ? <Badge tone="amber">{p.pendingMerges}</Badge> : 0),
          },
          { key: "splits", header: "Splits", className: "tabular-nums text-right", cell: (p) => p.splits },
          {
            key: "origins",
            header: "Origins",
            cell: (p) => p.origins.map((o) => `${o.origin || "—"} (${o.tasks})`).join(", "),
          },
          { key: "updated", header: "Updated", cell: (p) => <Ago at={p.updatedAt} /> },
        ]}
      />
      <UploadPanel />
    </div>
  );
}
