"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";

// Token matching from the dataset page: a child snapshot of whole tasks holding B ± 0.5%
// supervised tokens (datasets.budget), so study arms train on equal amounts of data. It needs the
// snapshot's per-sample counts, which "Count tokens on an agent" measures.

export function BudgetForm({ id, supervisedTokens }: { id: string; supervisedTokens: number }) {
  const trpc = useTRPC();
  const nav = useRouter();
  const [tokens, setTokens] = useState(String(Math.round(supervisedTokens / 2)));
  const [seed, setSeed] = useState("1");
  const budget = useMutation(
    trpc.datasets.budget.mutationOptions({ onSuccess: (r) => nav.push(`/datasets/${r.dataset.id}`) }),
  );
  return (
    <form
      aria-label="token budget"
      className="mt-3 flex flex-wrap items-end gap-2 text-sm"
      onSubmit={(e) => {
        e.preventDefault();
        budget.mutate({ id, tokens: Number(tokens), seed: Number(seed) });
      }}
    >
      <WholeNumber label="Supervised tokens (B)" name="tokens" min={1} value={tokens} onChange={setTokens} />
      <WholeNumber label="Seed" name="seed" min={0} value={seed} onChange={setSeed} />
      <Button type="submit" disabled={budget.isPending}>
        Make a budget snapshot
      </Button>
      <span className="text-xs text-zinc-500">
        whole tasks, stratified by source group, until B ± 0.5% (of {supervisedTokens.toLocaleString()})
      </span>
      <div className="w-full">
        <ErrorBox error={budget.error} />
      </div>
    </form>
  );
}

function WholeNumber(p: { label: string; name: string; min: number; value: string; onChange: (v: string) => void }) {
  return (
    <label className="block">
      <span className="mb-1 block text-xs font-medium text-zinc-600">{p.label}</span>
      <input
        className="h-8 w-32 rounded-md border border-zinc-300 px-2"
        name={p.name}
        type="number"
        min={p.min}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
      />
    </label>
  );
}
