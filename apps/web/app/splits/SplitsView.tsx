"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ShowArchived } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { CreateSplit } from "./CreateSplit";

export function SplitsView() {
  const trpc = useTRPC();
  const [includeArchived, setIncludeArchived] = useState(false);
  const splits = useQuery(trpc.splits.list.queryOptions({ includeArchived }));
  type Row = NonNullable<typeof splits.data>[number];
  return (
    <div className="space-y-4">
      <PageHeader
        title="Splits"
        description="Frozen train/dev/test splits by source group. The database refuses any change to a frozen split."
        actions={<ShowArchived value={includeArchived} onChange={setIncludeArchived} />}
      />
      {splits.error ? <ErrorBox error={splits.error} /> : null}
      <Table<Row>
        rows={splits.data ?? []}
        rowKey={(s) => s.id}
        rowHref={(s) => `/splits/${s.id}`}
        empty={
          splits.isLoading ? null : (
            <EmptyState title="No splits yet">
              Create one below or with <code>npx agentlab splits create POOL --seed 0</code>.
            </EmptyState>
          )
        }
        columns={[
          {
            key: "name",
            header: "Split",
            cell: (s) => (
              <span className="font-medium">
                {s.name} {s.archivedAt ? <Badge tone="amber">archived</Badge> : null}
              </span>
            ),
          },
          { key: "pool", header: "Pool", cell: (s) => s.poolName },
          {
            key: "params",
            header: "Seed · dev · test",
            className: "tabular-nums",
            cell: (s) => `${s.seed} · ${s.devRatio} · ${s.testRatio}`,
          },
          {
            key: "sizes",
            header: "train / dev / test",
            className: "tabular-nums",
            cell: (s) => `${s.counts.train.tasks} / ${s.counts.dev.tasks} / ${s.counts.test.tasks}`,
          },
          {
            key: "leak",
            header: "Leakage",
            cell: (s) =>
              s.testTasksWithLeak ? (
                <Badge tone="amber">{s.testTasksWithLeak} test tasks</Badge>
              ) : (
                <Badge tone="green">none</Badge>
              ),
          },
          { key: "manifest", header: "Manifest", cell: (s) => <Mono value={s.manifestHash} /> },
          { key: "created", header: "Created", cell: (s) => <Ago at={s.createdAt} /> },
        ]}
      />
      <Section title="New split">
        <CreateSplit />
      </Section>
    </div>
  );
}
