"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader } from "../_components/PageHeader";
import { StateBadge } from "../_components/StatusBadges";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";

// Studies, newest first; each is created here (New study) or from its file (`agentlab studies create FILE`).
export function StudiesView() {
  const trpc = useTRPC();
  const list = useQuery(trpc.studies.list.queryOptions());
  const viewer = useViewer();
  return (
    <div>
      <PageHeader
        title="Studies"
        description="Controlled experiments: arms that differ from a reference in one factor, one test claim for all of them."
        actions={
          canAct(viewer, "member") ? (
            <Link href="/studies/new" className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white">
              New study
            </Link>
          ) : null
        }
      />
      {list.error ? <ErrorBox error={list.error} onRetry={() => void list.refetch()} /> : null}
      <Table
        rows={list.data ?? []}
        rowKey={(r) => r.id}
        rowHref={(r) => `/studies/${r.id}`}
        empty={
          <EmptyState title="No study yet">
            Create one with <Link href="/studies/new">New study</Link>, or write a study file and run{" "}
            <code>agentlab studies plan FILE</code>, then <code>agentlab studies create FILE</code>.
          </EmptyState>
        }
        columns={[
          { key: "name", header: "Name", cell: (r) => r.name },
          { key: "state", header: "State", cell: (r) => <StateBadge state={r.state} /> },
          { key: "claim", header: "Test set", cell: (r) => (r.testClaimId ? "claimed once" : "not claimed") },
          { key: "created", header: "Created", cell: (r) => new Date(r.createdAt).toISOString().slice(0, 16) },
        ]}
      />
    </div>
  );
}
