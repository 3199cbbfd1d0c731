"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { DATA_QUALITIES, DATA_QUALITY_LABELS, DataQuality } from "@agentlab/core";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { ShowArchived } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { QualityBadge } from "./QualityBadge";

const input = "h-8 rounded-md border border-zinc-300 px-2 text-sm";

export function DatasetsView() {
  const trpc = useTRPC();
  const router = useRouter();
  const canCreate = canAct(useViewer(), "member");
  const [includeArchived, setIncludeArchived] = useState(false);
  const list = useQuery(trpc.datasets.list.queryOptions({ includeArchived }));
  const cols = useQuery(trpc.collections.list.queryOptions({}));
  const create = useMutation(
    trpc.datasets.create.mutationOptions({ onSuccess: (d) => router.push(`/datasets/${d.id}`) }),
  );
  const [name, setName] = useState("");
  const [picked, setPicked] = useState<string[]>([]);
  const [quality, setQuality] = useState<DataQuality>("verified");
  const done = (cols.data ?? []).filter((c) => c.state === "done" || c.state === "stopped_budget");
  const splitId = done.find((c) => c.id === picked[0])?.splitId ?? "";

  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name, splitId, collectionIds: picked, quality });
  };

  return (
    <div className="space-y-5">
      <PageHeader
        title="SFT datasets"
        description="Immutable, hashed snapshots of teacher answers: verified (passing) ones unless another quality is chosen for a study's arm. Replay re-grades every sample of a verified snapshot before training."
        actions={<ShowArchived value={includeArchived} onChange={setIncludeArchived} />}
      />
      <ErrorBox error={list.error ?? create.error} />
      {canCreate ? (
        <Section title="Snapshot teacher answers">
          <form onSubmit={submit} className="space-y-2 text-sm">
            <div className="flex flex-wrap gap-3">
              {done.map((c) => (
                <label
                  key={c.id}
                  className={`flex items-center gap-1 ${splitId && c.splitId !== splitId ? "opacity-40" : ""}`}
                >
                  <input
                    type="checkbox"
                    disabled={Boolean(splitId) && c.splitId !== splitId}
                    checked={picked.includes(c.id)}
                    onChange={(e) => setPicked(e.target.checked ? [...picked, c.id] : picked.filter((x) => x !== c.id))}
                  />
                  {c.name}
                  {c.providerKind === "reference" ? " (oracle)" : ""}
                </label>
              ))}
              {done.length === 0 ? <span className="text-zinc-500">No finished collections.</span> : null}
            </div>
            <div className="flex gap-2">
              <label className="flex items-center gap-1">
                Answers
                <select
                  className={input}
                  aria-label="answer quality"
                  value={quality}
                  onChange={(e) => setQuality(DataQuality.parse(e.target.value))}
                >
                  {DATA_QUALITIES.map((q) => (
                    <option key={q} value={q}>
                      {DATA_QUALITY_LABELS[q]}
                    </option>
                  ))}
                </select>
              </label>
              <input
                className={input}
                placeholder="dataset name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                required
              />
              <Button variant="primary" type="submit" disabled={create.isPending || picked.length === 0}>
                Create snapshot
              </Button>
            </div>
          </form>
        </Section>
      ) : null}
      <Table
        rows={list.data ?? []}
        rowKey={(d) => d.id}
        rowHref={(d) => `/datasets/${d.id}`}
        empty={<EmptyState title="No datasets yet" />}
        columns={[
          {
            key: "name",
            header: "Dataset",
            cell: (d) => (
              <div className="flex items-center gap-2">
                <span className="font-medium">{d.name}</span>
                {d.oracleSamples > 0 ? (
                  <Badge tone="amber" title="Contains reference-oracle samples">
                    oracle ×{d.oracleSamples}
                  </Badge>
                ) : null}
                <QualityBadge quality={d.quality} />
                {d.parentId ? <Badge tone="green">derived</Badge> : null}
                {d.archivedAt ? <Badge tone="amber">archived</Badge> : null}
              </div>
            ),
          },
          {
            key: "hash",
            header: "sha256",
            cell: (d) => <span className="font-mono text-xs">{d.hash.slice(0, 12)}</span>,
          },
          { key: "samples", header: "Samples", cell: (d) => d.sampleCount },
          { key: "tasks", header: "Tasks", cell: (d) => d.taskCount },
          {
            key: "tokens",
            header: "Supervised tokens",
            cell: (d) => (d.tokenCounts ? d.tokenCounts.supervisedTokens.toLocaleString() : "—"),
          },
          { key: "at", header: "Created", cell: (d) => <Ago at={d.createdAt} /> },
        ]}
      />
    </div>
  );
}
