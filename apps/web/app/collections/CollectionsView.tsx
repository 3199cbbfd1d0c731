"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button } from "../_components/Button";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { OracleBadge, StateBadge } from "../_components/StatusBadges";
import { usd } from "../../client/format";
import { CollectionBars } from "./CollectionBars";

const input = "h-8 rounded-md border border-zinc-300 px-2 text-sm";

export function CollectionsView() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const canStart = canAct(useViewer(), "member");
  const list = useQuery(trpc.collections.list.queryOptions({}, { refetchInterval: 2_000 }));
  const splits = useQuery(trpc.splits.list.queryOptions({}));
  const providers = useQuery(trpc.providers.list.queryOptions());
  const create = useMutation(
    trpc.collections.create.mutationOptions({
      onSuccess: (c) => (
        void qc.invalidateQueries({ queryKey: trpc.collections.list.queryKey() }), router.push(`/collections/${c.id}`)
      ),
    }),
  );
  const [f, setF] = useState({
    splitId: "",
    providerId: "",
    dev: false,
    n: "1",
    temperature: "0.8",
    budget: "",
    concurrency: "4",
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({
      splitId: f.splitId,
      providerId: f.providerId,
      parts: f.dev ? ["train", "dev"] : ["train"],
      nSamples: Number(f.n),
      concurrency: Number(f.concurrency),
      params: { temperature: Number(f.temperature), top_p: 1, max_tokens: 2048 },
      budgetUsd: f.budget ? Number(f.budget) : undefined,
    });
  };

  return (
    <div className="space-y-5">
      <PageHeader
        title="Teacher collections"
        description="Candidates from a teacher on a split's train/dev tasks (test tasks are refused), cached and graded by agents."
      />
      <ErrorBox error={list.error ?? create.error} />
      {canStart ? (
        <Section title="Start a collection">
          <form onSubmit={submit} className="flex flex-wrap items-end gap-2 text-sm">
            <select
              className={input}
              value={f.splitId}
              onChange={(e) => setF({ ...f, splitId: e.target.value })}
              required
            >
              <option value="">split…</option>
              {(splits.data ?? []).map((s) => (
                <option key={s.id} value={s.id}>
                  {s.poolName} / {s.name}
                </option>
              ))}
            </select>
            <select
              className={input}
              value={f.providerId}
              onChange={(e) => setF({ ...f, providerId: e.target.value })}
              required
            >
              <option value="">provider…</option>
              {(providers.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({p.kind === "reference" ? "oracle" : p.model})
                </option>
              ))}
            </select>
            <label className="flex items-center gap-1">
              <input type="checkbox" checked={f.dev} onChange={(e) => setF({ ...f, dev: e.target.checked })} /> include
              dev
            </label>
            <label>
              n{" "}
              <input
                className={`${input} w-14`}
                type="number"
                min={1}
                max={64}
                value={f.n}
                onChange={(e) => setF({ ...f, n: e.target.value })}
              />
            </label>
            <label>
              temperature{" "}
              <input
                className={`${input} w-16`}
                type="number"
                step="0.1"
                min={0}
                max={2}
                value={f.temperature}
                onChange={(e) => setF({ ...f, temperature: e.target.value })}
              />
            </label>
            <label>
              concurrency{" "}
              <input
                className={`${input} w-14`}
                type="number"
                min={1}
                max={64}
                value={f.concurrency}
                onChange={(e) => setF({ ...f, concurrency: e.target.value })}
              />
            </label>
            <label>
              budget ${" "}
              <input
                className={`${input} w-20`}
                type="number"
                step="any"
                min={0}
                placeholder="none"
                value={f.budget}
                onChange={(e) => setF({ ...f, budget: e.target.value })}
              />
            </label>
            <Button variant="primary" type="submit" disabled={create.isPending}>
              Start
            </Button>
          </form>
        </Section>
      ) : null}
      <Table
        rows={list.data ?? []}
        rowKey={(c) => c.id}
        rowHref={(c) => `/collections/${c.id}`}
        empty={<EmptyState title="No collections yet" />}
        columns={[
          {
            key: "name",
            header: "Collection",
            cell: (c) => (
              <div className="flex items-center gap-2">
                <span className="font-medium">{c.name}</span>
                {c.providerKind === "reference" ? <OracleBadge /> : null}
              </div>
            ),
          },
          { key: "state", header: "State", cell: (c) => <StateBadge state={c.state} /> },
          { key: "progress", header: "Progress", className: "w-64", cell: (c) => <CollectionBars c={c} /> },
          { key: "cost", header: "Cost", cell: (c) => <span className="tabular-nums">{usd(c.costUsd)}</span> },
          {
            key: "reuse",
            header: "Reused",
            cell: (c) => (
              <span className="tabular-nums">
                {c.reused} ({usd(c.costSavedUsd)} saved)
              </span>
            ),
          },
          {
            key: "tokens",
            header: "Tokens in/out",
            cell: (c) => (
              <span className="tabular-nums">
                {c.tokensIn.toLocaleString()} / {c.tokensOut.toLocaleString()}
              </span>
            ),
          },
          { key: "at", header: "Created", cell: (c) => <Ago at={c.createdAt} /> },
        ]}
      />
    </div>
  );
}
