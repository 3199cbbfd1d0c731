"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ArchiveControls } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { Pager } from "../_components/Pager";
import { PageHeader, Section } from "../_components/PageHeader";
import { Fields, Stat } from "../_components/Stat";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import type { SplitAdmission } from "@agentlab/core/tasks/split";
import { useTRPC } from "../_lib/trpc";
import { TestLedger } from "./TestLedger";

type Part = "train" | "dev" | "test";
const PARTS: Part[] = ["train", "dev", "test"];
const LEAK_PAGE = 50;

export function SplitDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const split = useQuery(trpc.splits.byId.queryOptions({ id }));
  const nav = useRouter();
  const archive = useMutation(trpc.splits.archive.mutationOptions({ onSuccess: () => void split.refetch() }));
  const remove = useMutation(trpc.splits.delete.mutationOptions({ onSuccess: () => nav.push("/splits") }));
  const [leakFrom, setLeakFrom] = useState(0);
  if (split.error) return <ErrorBox error={split.error} onRetry={() => void split.refetch()} />;
  const s = split.data;
  if (!s) return <p className="text-sm text-zinc-500">Loading…</p>;
  const l = s.leakage;
  type Pair = (typeof l.pairs)[number];
  return (
    <div className="space-y-4">
      <PageHeader
        title={s.name}
        description={
          <>
            Split of pool{" "}
            <Link className="underline" href={`/pools/${s.poolId}`}>
              {s.poolName}
            </Link>
          </>
        }
        actions={
          <>
            {/* The next step from a frozen split is the experiment on it: first among the actions. */}
            {s.frozen && !s.archivedAt ? (
              <Link
                href={`/experiments/new?split=${id}`}
                className="inline-flex h-8 items-center rounded-md border border-zinc-900 bg-zinc-900 px-3 text-sm font-medium text-white hover:bg-zinc-700"
              >
                Start an experiment on this split
              </Link>
            ) : null}
            <ArchiveControls
              what="split"
              name={s.name}
              archivedAt={s.archivedAt}
              archive={{ ...archive, mutate: () => archive.mutate({ id, archived: true }) }}
              restore={{ ...archive, mutate: () => archive.mutate({ id, archived: false }) }}
              remove={{ ...remove, mutate: () => remove.mutate({ id }) }}
              deleteNote="Refused while an experiment, collection or dataset uses it (a frozen split in use can only be archived)."
            />
          </>
        }
        meta={
          <>
            {s.frozen ? <Badge tone="green">frozen</Badge> : <Badge tone="red">not frozen</Badge>} created{" "}
            <Ago at={s.createdAt} />
          </>
        }
      />
      <div className="grid grid-cols-3 gap-3">
        {PARTS.map((p) => (
          <Stat key={p} label={p} value={s.counts[p].tasks.toLocaleString()} hint={`${s.counts[p].groups} groups`} />
        ))}
      </div>
      <Section title="Manifest">
        <Fields
          items={[
            { label: "Manifest hash", value: <Mono value={s.manifestHash} chars={64} copy /> },
            { label: "Pool snapshot", value: <Mono value={s.poolSnapshotHash} chars={64} copy /> },
            { label: "Seed", value: s.seed },
            { label: "Ratios", value: `dev ${s.devRatio} · test ${s.testRatio}` },
            { label: "Admission gate", value: <AdmissionLine admission={s.admission} /> },
            {
              label: "Export",
              value: (
                <code className="text-xs">
                  npx agentlab pools export {s.poolName} --split {s.id} --part train
                </code>
              ),
            },
          ]}
        />
      </Section>
      <Section
        title={`Leakage report (test vs train/dev)`}
        actions={
          l.pairs.length > LEAK_PAGE ? (
            <Pager
              offset={leakFrom}
              limit={LEAK_PAGE}
              total={l.pairs.length}
              onOffset={setLeakFrom}
              testId="leakage-shown"
            />
          ) : null
        }
      >
        <p className="mb-3 text-sm text-zinc-600">
          {l.testTasksWithLeak} of {l.testTasks} test tasks overlap train/dev: {l.exactPairs} exact, {l.normalizedPairs}{" "}
          normalized (comments, whitespace, case), {l.ngramPairs} sharing {l.n}-grams of instruction + code (n-grams in
          more than {l.maxDocFreq} train/dev tasks count as boilerplate).
          {l.truncated ? " Only the most severe pairs are listed." : ""}
        </p>
        <Table<Pair>
          bare
          rows={l.pairs.slice(leakFrom, leakFrom + LEAK_PAGE)}
          rowKey={(p) => `${p.testTaskId}|${p.otherTaskId}`}
          empty={<Badge tone="green">No overlap found</Badge>}
          columns={[
            {
              key: "test",
              header: "Test task",
              cell: (p) => <span className="font-mono text-xs">{p.testTaskId}</span>,
            },
            {
              key: "other",
              header: "Train/dev task",
              cell: (p) => (
                <span className="font-mono text-xs">
                  {p.otherTaskId} <span className="text-zinc-400">({p.otherPart})</span>
                </span>
              ),
            },
            {
              key: "kind",
              header: "Overlap",
              cell: (p) => (
                <span className="flex gap-1">
                  {p.exact ? <Badge tone="red">exact</Badge> : null}
                  {p.normalized ? <Badge tone="amber">normalized</Badge> : null}
                  {p.sharedNgrams ? (
                    <Badge tone="blue">
                      {p.sharedNgrams} {l.n}-grams
                    </Badge>
                  ) : null}
                </span>
              ),
            },
            {
              key: "ratio",
              header: "Share of test n-grams",
              className: "tabular-nums",
              cell: (p) => `${Math.round(p.overlap * 100)}%`,
            },
          ]}
        />
      </Section>
      <TestLedger splitId={id} />
      <GroupList splitId={id} />
    </div>
  );
}

function GroupList({ splitId }: { splitId: string }) {
  const trpc = useTRPC();
  const [part, setPart] = useState<Part | undefined>(undefined);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const groups = useQuery(
    trpc.splits.groups.queryOptions({ splitId, part, after, limit: 100 }, { placeholderData: (prev) => prev }),
  );
  type Row = NonNullable<typeof groups.data>["items"][number];
  const next = groups.data?.nextCursor;
  return (
    <Section
      title="Source groups"
      actions={
        <select
          aria-label="Part"
          className="h-7 rounded-md border border-zinc-300 bg-white px-2 text-xs"
          value={part ?? ""}
          onChange={(e) => {
            setPart((e.target.value || undefined) as Part | undefined);
            setCursors([undefined]);
          }}
        >
          <option value="">all parts</option>
          {PARTS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      }
    >
      {groups.error ? <ErrorBox error={groups.error} /> : null}
      <Table<Row>
        bare
        rows={groups.data?.items ?? []}
        rowKey={(g) => g.group}
        columns={[
          { key: "group", header: "Group", cell: (g) => <span className="font-mono text-xs">{g.group}</span> },
          {
            key: "part",
            header: "Part",
            cell: (g) => (
              <Badge tone={g.part === "test" ? "violet" : g.part === "dev" ? "blue" : "neutral"}>{g.part}</Badge>
            ),
          },
          { key: "size", header: "Tasks", className: "tabular-nums", cell: (g) => g.size },
        ]}
      />
      <div className="mt-3 flex justify-end gap-2">
        <Button size="sm" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Previous
        </Button>
        <Button size="sm" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
          Next
        </Button>
      </div>
    </Section>
  );
}

/** What the admission gate did when this split was made (recorded on the split, frozen with it). */
function AdmissionLine({ admission }: { admission: SplitAdmission | null }) {
  if (!admission) return <span className="text-zinc-500">not applied (split made before the gate existed)</span>;
  if (admission.includeFailedAudits) {
    return (
      <span>
        <Badge tone="amber">override</Badge> {admission.failedAuditsIncluded} task(s) with a failed admission audit
        included on purpose{admission.overrideBy ? " (recorded with the creator)" : ""}
      </span>
    );
  }
  const n = admission.excludedTaskIds.length;
  if (n === 0) return <Badge tone="green">no task had a failed admission audit</Badge>;
  const shown = admission.excludedTaskIds.slice(0, 10).join(", ");
  return (
    <span>
      {n} task(s) left out because their admission audit failed:{" "}
      <span className="font-mono text-xs">
        {shown}
        {n > 10 ? ", …" : ""}
      </span>
    </span>
  );
}
