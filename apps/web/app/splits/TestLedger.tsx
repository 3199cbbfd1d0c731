"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { TestReadsList } from "../reports/TestReadsList";

// The split's test-read ledger, and for admins: mark it final, or let one experiment read a final
// split's test part with a reason (printed on every report built on the split).

export function TestLedger({ splitId }: { splitId: string }) {
  const trpc = useTRPC();
  const viewer = useViewer();
  const reads = useQuery(trpc.splits.testReads.queryOptions({ splitId }));
  const refetch = () => void reads.refetch();
  const markFinal = useMutation(trpc.splits.markFinal.mutationOptions({ onSuccess: refetch }));
  const override = useMutation(trpc.splits.overrideFinal.mutationOptions({ onSuccess: refetch }));
  const [experimentId, setExperimentId] = useState("");
  const [reason, setReason] = useState("");
  const admin = canAct(viewer, "admin");
  const r = reads.data;
  return (
    <Section
      title="Test reads"
      actions={
        admin && r && !r.final ? (
          <Button
            size="sm"
            disabled={markFinal.isPending}
            onClick={() => {
              if (
                window.confirm("Mark this split final? Further test reads will need an admin override with a reason.")
              )
                markFinal.mutate({ splitId, note: "" });
            }}
          >
            Mark final
          </Button>
        ) : null
      }
    >
      {reads.error ? <ErrorBox error={reads.error} /> : null}
      {markFinal.error ? <ErrorBox error={markFinal.error} /> : null}
      {r ? <TestReadsList reads={r} links /> : <p className="text-sm text-zinc-500">Loading…</p>}
      {admin && r?.final && (
        <form
          className="mt-3 flex flex-wrap items-end gap-2 text-sm"
          onSubmit={(e) => {
            e.preventDefault();
            override.mutate({ splitId, experimentId: experimentId.trim(), reason });
          }}
        >
          <label className="flex flex-col">
            <span className="text-xs text-zinc-500">Experiment id</span>
            <input
              className="h-8 w-80 rounded-md border border-zinc-300 px-2 font-mono text-xs"
              value={experimentId}
              onChange={(e) => setExperimentId(e.target.value)}
            />
          </label>
          <label className="flex min-w-64 flex-1 flex-col">
            <span className="text-xs text-zinc-500">Reason (printed on the report)</span>
            <input
              className="h-8 rounded-md border border-zinc-300 px-2"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
            />
          </label>
          <Button type="submit" disabled={override.isPending || !experimentId.trim() || !reason.trim()}>
            Allow this test read
          </Button>
          {override.data && (
            <span className="text-xs text-zinc-600">
              allowed{override.data.resumed ? "; the experiment was resumed" : ""}
            </span>
          )}
          {override.error ? <ErrorBox error={override.error} /> : null}
        </form>
      )}
    </Section>
  );
}
