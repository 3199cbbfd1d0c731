"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";

/**
 * One click adds the reference oracle: a provider that answers with each task's reference fix, so
 * the whole pipeline runs on a fresh install without an API key (the data it yields is an upper
 * bound, not a teacher's). Admins only, as every provider change.
 */
export function AddOracle({ onAdded }: { onAdded?: (id: string) => void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const isAdmin = canAct(useViewer(), "admin");
  const add = useMutation(
    trpc.providers.create.mutationOptions({
      onSuccess: (p) => {
        void qc.invalidateQueries({ queryKey: trpc.providers.list.queryKey() });
        onAdded?.(p.id);
      },
    }),
  );
  if (!isAdmin) return <span className="text-xs text-zinc-500">an admin can add the reference oracle provider</span>;
  return (
    <span className="inline-flex flex-col gap-1">
      <Button
        size="sm"
        disabled={add.isPending}
        onClick={() => add.mutate({ name: "reference oracle", kind: "reference", model: "reference", extraParams: {} })}
      >
        Add the reference oracle provider
      </Button>
      <ErrorBox error={add.error} title="Provider not added" />
    </span>
  );
}
