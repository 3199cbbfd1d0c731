"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Badge } from "../../_components/Badge";
import { Button } from "../../_components/Button";
import { CopyButton } from "../../_components/CopyButton";
import { ErrorBox } from "../../_components/ErrorBox";
import { PageHeader, Section } from "../../_components/PageHeader";
import { Table, type Column } from "../../_components/Table";
import { Ago } from "../../_components/Time";
import { useTRPC } from "../../_lib/trpc";
import { Field } from "../../login/AuthCard";
import { SettingsNav } from "../SettingsNav";

type TokenRow = {
  id: string;
  name: string;
  prefix: string;
  createdAt: string | Date;
  expiresAt: string | Date | null;
  lastUsedAt: string | Date | null;
  revokedAt: string | Date | null;
};

export function TokensView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey() });
  const [name, setName] = useState("");
  const [ttlDays, setTtlDays] = useState("90");
  // The new value lives only in this component's state: it is shown once and gone on reload.
  const [fresh, setFresh] = useState<string | null>(null);
  const create = useMutation(
    trpc.tokens.create.mutationOptions({ onSuccess: (t) => (setFresh(t.token), setName(""), refresh()) }),
  );
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSettled: refresh }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name, ttlDays: ttlDays === "never" ? null : Number(ttlDays) });
  };
  const columns: Column<TokenRow>[] = [
    { key: "name", header: "Name", cell: (t) => <span className="font-medium">{t.name}</span> },
    { key: "prefix", header: "Token", cell: (t) => <code className="text-xs text-zinc-600">{t.prefix}…</code> },
    { key: "used", header: "Last used", cell: (t) => <Ago at={t.lastUsedAt} /> },
    { key: "created", header: "Created", cell: (t) => <Ago at={t.createdAt} /> },
    {
      key: "expires",
      header: "Expires",
      cell: (t) => (t.expiresAt ? new Date(t.expiresAt).toISOString().slice(0, 10) : "never"),
    },
    {
      key: "state",
      header: "",
      className: "w-px",
      cell: (t) =>
        t.revokedAt ? (
          <Badge tone="red">revoked</Badge>
        ) : t.expiresAt && new Date(t.expiresAt).getTime() < Date.now() ? (
          <Badge tone="amber">expired</Badge>
        ) : (
          <Button
            size="sm"
            variant="danger"
            disabled={revoke.isPending}
            onClick={() =>
              window.confirm(`Revoke "${t.name}"? Scripts using it stop working at once.`) &&
              revoke.mutate({ id: t.id })
            }
          >
            Revoke
          </Button>
        ),
    },
  ];
  return (
    <div>
      <PageHeader
        title="API tokens"
        description="Personal tokens for the agentlab CLI. A token acts with your role; it is shown once and stored only as a hash."
      />
      <SettingsNav />
      <div className="grid gap-5">
        <Section title="New token">
          <form onSubmit={submit} className="flex flex-wrap items-end gap-3">
            <div className="w-64">
              <Field
                label="Name"
                required
                maxLength={100}
                placeholder="laptop CLI"
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            </div>
            <label className="mb-3 block text-sm">
              <span className="mb-1 block font-medium text-zinc-700">Expires after</span>
              <select
                className="h-9 rounded-md border border-zinc-300 px-2 text-sm"
                value={ttlDays}
                onChange={(e) => setTtlDays(e.target.value)}
              >
                {["7", "30", "90", "365"].map((d) => (
                  <option key={d} value={d}>
                    {d} days
                  </option>
                ))}
                <option value="never">never</option>
              </select>
            </label>
            <Button type="submit" variant="primary" className="mb-3" disabled={create.isPending}>
              Create token
            </Button>
          </form>
          {create.error ? <ErrorBox title="Token not created" error={create.error} /> : null}
          {fresh ? (
            <div className="mt-2 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm">
              <p className="font-medium text-amber-900">Copy this token now; it will not be shown again.</p>
              <code className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs">{fresh}</code>
              <div className="mt-2">
                <CopyButton text={fresh} />
              </div>
              {/* The CLI keeps it for later commands; piping keeps the token out of shell history. */}
              <p className="mt-3 text-xs text-zinc-700">Use it from the command line (paste the token when asked):</p>
              <code
                className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs"
                data-testid="cli-login"
              >
                {`npx agentlab login --server ${typeof window === "undefined" ? "" : window.location.origin}`}
              </code>
            </div>
          ) : null}
        </Section>
        {tokens.error ? <ErrorBox error={tokens.error} onRetry={() => void tokens.refetch()} /> : null}
        {revoke.error ? <ErrorBox title="Not revoked" error={revoke.error} /> : null}
        <Table
          columns={columns}
          rows={(tokens.data ?? []) as TokenRow[]}
          rowKey={(t) => t.id}
          empty={<p className="text-sm text-zinc-500">No tokens yet.</p>}
        />
      </div>
    </div>
  );
}
