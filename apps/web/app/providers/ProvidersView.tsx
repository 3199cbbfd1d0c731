"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ShowArchived } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { EmptyState } from "../_components/EmptyState";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";

// Teacher providers and the price table. API keys are write-only: the form sends one, the list
// shows only whether one is stored.

const input = "h-8 rounded-md border border-zinc-300 px-2 text-sm";

export function ProvidersView() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const isAdmin = canAct(useViewer(), "admin");
  const [includeArchived, setIncludeArchived] = useState(false);
  const providers = useQuery(trpc.providers.list.queryOptions({ includeArchived }));
  const prices = useQuery(trpc.providers.prices.queryOptions());
  const refresh = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.providers.list.queryKey() }),
      qc.invalidateQueries({ queryKey: trpc.providers.prices.queryKey() }),
    ]);
  const create = useMutation(trpc.providers.create.mutationOptions({ onSuccess: refresh }));
  const update = useMutation(trpc.providers.update.mutationOptions({ onSuccess: refresh }));
  const setPrice = useMutation(trpc.providers.setPrice.mutationOptions({ onSuccess: refresh }));
  // Refused by the server (CONFLICT, shown below) once a collection used the provider: it is part of that record.
  const remove = useMutation(trpc.providers.delete.mutationOptions({ onSuccess: refresh }));
  // What a provider that collections used gets instead: hidden from this list and the experiment form.
  const archive = useMutation(trpc.providers.archive.mutationOptions({ onSuccess: refresh }));
  const [form, setForm] = useState({
    name: "",
    kind: "openai" as "openai" | "reference",
    baseUrl: "",
    model: "",
    apiKey: "",
    extra: "{}",
  });
  const [price, setPriceForm] = useState({ model: "", inputPerMTok: "0", outputPerMTok: "0" });
  const [extraError, setExtraError] = useState<string | null>(null);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    let extraParams: Record<string, unknown>;
    try {
      extraParams = JSON.parse(form.extra || "{}") as Record<string, unknown>;
      setExtraError(null);
    } catch {
      return setExtraError("extra parameters must be a JSON object");
    }
    create.mutate(
      {
        name: form.name,
        kind: form.kind,
        model: form.kind === "reference" ? "reference" : form.model,
        baseUrl: form.kind === "openai" ? form.baseUrl : undefined,
        apiKey: form.apiKey || undefined,
        extraParams,
      },
      { onSuccess: () => setForm({ ...form, name: "", apiKey: "" }) },
    );
  };

  const rotateKey = (id: string) => {
    const key = window.prompt(
      "New API key (stored encrypted; it will not be shown again). Leave empty to make the provider keyless (no Authorization header).",
    );
    if (key === null) return;
    update.mutate(key ? { id, apiKey: key, clearApiKey: false } : { id, clearApiKey: true });
  };

  return (
    <div className="space-y-5">
      <PageHeader
        title="Teacher providers"
        description="OpenAI-compatible endpoints that answer repair prompts, and the reference oracle for offline runs."
      />
      <ErrorBox
        error={providers.error ?? create.error ?? update.error ?? setPrice.error ?? remove.error ?? archive.error}
      />
      <Section title="Providers" actions={<ShowArchived value={includeArchived} onChange={setIncludeArchived} />}>
        <Table
          rows={providers.data ?? []}
          rowKey={(p) => p.id}
          empty={
            <EmptyState title="No providers yet">
              Add an OpenAI-compatible endpoint, or the reference oracle.
            </EmptyState>
          }
          columns={[
            {
              key: "name",
              header: "Name",
              cell: (p) => (
                <span className="font-medium">
                  {p.name} {p.archivedAt ? <Badge tone="amber">archived</Badge> : null}
                </span>
              ),
            },
            {
              key: "kind",
              header: "Kind",
              cell: (p) =>
                p.kind === "reference" ? (
                  <Badge tone="amber" title="Answers with the task's reference solution: an oracle, not a model">
                    reference oracle
                  </Badge>
                ) : (
                  <Badge tone="blue">openai</Badge>
                ),
            },
            { key: "model", header: "Model", cell: (p) => <span className="font-mono text-xs">{p.model}</span> },
            {
              key: "url",
              header: "Base URL",
              cell: (p) => <span className="font-mono text-xs">{p.baseUrl ?? "—"}</span>,
            },
            {
              key: "key",
              header: "API key",
              cell: (p) =>
                p.kind === "reference" ? (
                  "—"
                ) : p.hasApiKey ? (
                  <Badge tone="green">stored (write-only)</Badge>
                ) : (
                  <Badge title="No Authorization header is sent (local servers)">keyless</Badge>
                ),
            },
            {
              key: "extra",
              header: "Extra params",
              cell: (p) => <span className="font-mono text-xs">{JSON.stringify(p.extraParams)}</span>,
            },
            {
              key: "act",
              header: "",
              cell: (p) =>
                isAdmin ? (
                  <span className="flex gap-1">
                    {p.kind === "openai" ? (
                      <Button size="sm" onClick={() => rotateKey(p.id)}>
                        Set key…
                      </Button>
                    ) : null}
                    <Button
                      size="sm"
                      disabled={archive.isPending}
                      onClick={() =>
                        window.confirm(
                          p.archivedAt
                            ? `Restore provider "${p.name}"? It shows in lists and the experiment form again.`
                            : `Archive provider "${p.name}"? It is hidden from lists and the experiment form; its collections keep it.`,
                        ) && archive.mutate({ id: p.id, archived: !p.archivedAt })
                      }
                    >
                      {p.archivedAt ? "Restore" : "Archive"}
                    </Button>
                    <Button
                      size="sm"
                      variant="danger"
                      disabled={remove.isPending}
                      onClick={() =>
                        window.confirm(`Delete provider "${p.name}"? Only possible while no collection used it.`) &&
                        remove.mutate({ id: p.id })
                      }
                    >
                      Delete
                    </Button>
                  </span>
                ) : null,
            },
          ]}
        />
      </Section>
      {isAdmin ? (
        <Section title="Add a provider">
          <form onSubmit={submit} className="flex flex-wrap items-end gap-2 text-sm">
            <input
              className={input}
              placeholder="name"
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.target.value })}
              required
            />
            <select
              className={input}
              value={form.kind}
              onChange={(e) => setForm({ ...form, kind: e.target.value as "openai" | "reference" })}
            >
              <option value="openai">openai-compatible</option>
              <option value="reference">reference (oracle)</option>
            </select>
            {form.kind === "openai" ? (
              <>
                <input
                  className={`${input} w-72`}
                  placeholder="https://api.example.com/v1"
                  value={form.baseUrl}
                  onChange={(e) => setForm({ ...form, baseUrl: e.target.value })}
                  required
                />
                <input
                  className={input}
                  placeholder="model"
                  value={form.model}
                  onChange={(e) => setForm({ ...form, model: e.target.value })}
                  required
                />
                <input
                  className={input}
                  type="password"
                  autoComplete="off"
                  placeholder="API key (optional, write-only)"
                  title="Leave empty for a keyless server (e.g. a local vLLM or llama.cpp): no Authorization header is sent"
                  value={form.apiKey}
                  onChange={(e) => setForm({ ...form, apiKey: e.target.value })}
                />
                <input
                  className={`${input} w-56 font-mono`}
                  placeholder='{"reasoning_effort":"low"}'
                  value={form.extra}
                  onChange={(e) => setForm({ ...form, extra: e.target.value })}
                />
              </>
            ) : null}
            <Button variant="primary" type="submit" disabled={create.isPending}>
              Add
            </Button>
            {extraError ? <span className="text-red-700">{extraError}</span> : null}
          </form>
        </Section>
      ) : null}
      <Section title="Prices (USD per million tokens)">
        <Table
          rows={prices.data ?? []}
          rowKey={(p) => p.model}
          empty={<EmptyState title="No prices">Calls to models without a price are recorded with cost 0.</EmptyState>}
          columns={[
            { key: "model", header: "Model", cell: (p) => <span className="font-mono text-xs">{p.model}</span> },
            { key: "in", header: "Input", cell: (p) => `$${p.inputPerMTok}` },
            { key: "out", header: "Output", cell: (p) => `$${p.outputPerMTok}` },
          ]}
        />
        {isAdmin ? (
          <form
            className="mt-3 flex flex-wrap items-end gap-2 text-sm"
            onSubmit={(e) => {
              e.preventDefault();
              setPrice.mutate({
                model: price.model,
                inputPerMTok: Number(price.inputPerMTok),
                outputPerMTok: Number(price.outputPerMTok),
              });
            }}
          >
            <input
              className={input}
              placeholder="model"
              value={price.model}
              onChange={(e) => setPriceForm({ ...price, model: e.target.value })}
              required
            />
            <input
              className={`${input} w-24`}
              type="number"
              step="any"
              min="0"
              value={price.inputPerMTok}
              onChange={(e) => setPriceForm({ ...price, inputPerMTok: e.target.value })}
              aria-label="input price"
            />
            <input
              className={`${input} w-24`}
              type="number"
              step="any"
              min="0"
              value={price.outputPerMTok}
              onChange={(e) => setPriceForm({ ...price, outputPerMTok: e.target.value })}
              aria-label="output price"
            />
            <Button type="submit" disabled={setPrice.isPending}>
              Set price
            </Button>
          </form>
        ) : null}
      </Section>
    </div>
  );
}
