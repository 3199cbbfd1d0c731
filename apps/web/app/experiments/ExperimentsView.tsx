"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { StateBadge } from "../_components/StatusBadges";

export function ExperimentsView() {
  const trpc = useTRPC();
  const canCreate = canAct(useViewer(), "member");
  const list = useQuery(trpc.experiments.list.queryOptions({ limit: 100 }, { refetchInterval: 3_000 }));
  return (
    <div className="space-y-5">
      <PageHeader
        title="Experiments"
        description="Frozen split → teacher data → LoRA training per seed → dev selection → one test evaluation → report."
        actions={canCreate ? <Link href="/experiments/new" className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white">New experiment</Link> : null}
      />
      <ErrorBox error={list.error} />
      <Table
        rows={list.data ?? []}
        rowKey={(e) => e.id}
        rowHref={(e) => `/experiments/${e.id}`}
        empty={<EmptyState title="No experiments yet" />}
        columns={[
          { key: "name", header: "Experiment", cell: (e) => <span className="font-medium">{e.name}</span> },
          { key: "state", header: "State", cell: (e) => <StateBadge state={e.state} /> },
          { key: "error", header: "Error", cell: (e) => <span className="text-xs text-red-700">{e.error ?? ""}</span> },
          { key: "at", header: "Created", cell: (e) => <Ago at={e.createdAt} /> },
        ]}
      />
    </div>
  );
}
