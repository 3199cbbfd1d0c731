"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { ArchiveControls } from "../_components/ArchiveControls";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { Stat } from "../_components/Stat";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { CreateSplit } from "../splits/CreateSplit";
import { AuditPanel } from "./AuditPanel";
import { InstructionSearch } from "./InstructionSearch";
import { MergeProposals } from "./MergeProposals";
import { ClusterProposals } from "./ClusterProposals";
import { TaskBrowser } from "./TaskBrowser";
import { UploadPanel } from "./UploadPanel";

export function PoolDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const pool = useQuery(trpc.pools.byId.queryOptions({ id }));
  // The pool's own page lists its archived splits too, marked.
  const splits = useQuery(trpc.splits.list.queryOptions({ poolId: id, includeArchived: true }));
  const nav = useRouter();
  const archive = useMutation(trpc.pools.archive.mutationOptions({ onSuccess: () => void pool.refetch() }));
  const remove = useMutation(trpc.pools.delete.mutationOptions({ onSuccess: () => nav.push("/pools") }));
  if (pool.error) return <ErrorBox error={pool.error} onRetry={() => void pool.refetch()} />;
  const p = pool.data;
  if (!p) return <p className="text-sm text-zinc-500">Loading…</p>;
  type SplitRow = NonNullable<typeof splits.data>[number];
  return (
    <div className="space-y-4">
      <PageHeader
        title={p.name}
        description={p.description || "Task pool"}
        actions={
          <ArchiveControls
            what="pool"
            name={p.name}
            archivedAt={p.archivedAt}
            archive={{ ...archive, mutate: () => archive.mutate({ id, archived: true }) }}
            restore={{ ...archive, mutate: () => archive.mutate({ id, archived: false }) }}
            remove={p.builtin ? undefined : { ...remove, mutate: () => remove.mutate({ id }) }}
            deleteNote="Its tasks go with it; refused while any split of it exists (delete or keep those first)."
          />
        }
        meta={
          <>
            snapshot <Mono value={p.snapshotHash} chars={12} copy /> · updated <Ago at={p.updatedAt} /> · export with{" "}
            <code>npx agentlab pools export {p.name}</code>
          </>
        }
      />
      <div className="grid grid-cols-2 gap-3 md:grid-cols-5">
        <Stat label="Tasks" value={p.taskCount.toLocaleString()} />
        <Stat label="Source groups" value={p.groupCount.toLocaleString()} />
        <Stat label="Exact duplicates" value={p.exactDuplicateTasks} hint="tasks sharing a fingerprint" />
        <Stat label="Pending merges" value={p.pendingMerges} />
        <Stat label="Splits" value={p.splits} />
      </div>
      <Section title="Origins">
        <ul className="flex flex-wrap gap-3 text-sm">
          {p.origins.map((o) => (
            <li key={o.origin}>
              <span className="font-medium">{o.origin || "—"}</span>{" "}
              <span className="tabular-nums text-zinc-500">{o.tasks}</span>
            </li>
          ))}
        </ul>
      </Section>
      <AuditPanel poolId={id} />
      <InstructionSearch poolId={id} />
      <TaskBrowser poolId={id} />
      <MergeProposals poolId={id} />
      <ClusterProposals poolId={id} />
      <Section title="Splits">
        <Table<SplitRow>
          bare
          rows={splits.data ?? []}
          rowKey={(s) => s.id}
          rowHref={(s) => `/splits/${s.id}`}
          empty={<p className="text-sm text-zinc-500">No splits yet.</p>}
          columns={[
            {
              key: "name",
              header: "Split",
              cell: (s) => (
                <Link className="hover:underline" href={`/splits/${s.id}`}>
                  {s.name}
                </Link>
              ),
            },
            {
              key: "archived",
              header: "",
              cell: (s) => (s.archivedAt ? <span className="text-xs text-amber-700">archived</span> : null),
            },
            {
              key: "sizes",
              header: "train / dev / test",
              className: "tabular-nums",
              cell: (s) => `${s.counts.train.tasks} / ${s.counts.dev.tasks} / ${s.counts.test.tasks}`,
            },
            { key: "leak", header: "Leaky test tasks", className: "tabular-nums", cell: (s) => s.testTasksWithLeak },
            { key: "manifest", header: "Manifest", cell: (s) => <Mono value={s.manifestHash} /> },
          ]}
        />
        <div className="mt-4">
          <CreateSplit poolId={id} />
        </div>
      </Section>
      <UploadPanel defaultPool={p.name} />
    </div>
  );
}
