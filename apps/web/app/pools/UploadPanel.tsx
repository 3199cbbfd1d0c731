"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { formatProblem } from "@agentlab/core/tasks/spec";
import { Button } from "../_components/Button";
import { ProgressBar } from "../_components/ProgressBar";
import { Section } from "../_components/PageHeader";
import { useTRPC } from "../_lib/trpc";
import { uploadTaskFile, type UploadState } from "./upload";

/** Upload a .jsonl/.jsonl.gz file into a new or existing pool; all or nothing, every problem listed. */
export function UploadPanel({ defaultPool = "" }: { defaultPool?: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [pool, setPool] = useState(defaultPool);
  const [file, setFile] = useState<File | null>(null);
  const [state, setState] = useState<UploadState>({ phase: "idle" });
  const busy = state.phase === "uploading" || state.phase === "importing";

  const start = () => {
    if (!file || !pool) return;
    uploadTaskFile(file, pool, (s) => {
      setState(s);
      if (s.phase === "done" && s.result.ok) void queryClient.invalidateQueries({ queryKey: trpc.pools.pathKey() });
    });
  };

  return (
    <Section title="Import tasks">
      <div className="flex flex-wrap items-end gap-3">
        <label className="text-xs text-zinc-600">
          Pool
          <input
            className="mt-1 block h-8 w-56 rounded-md border border-zinc-300 px-2 text-sm"
            value={pool}
            onChange={(e) => setPool(e.target.value)}
            placeholder="my-pool"
            pattern="[A-Za-z0-9._-]{1,100}"
          />
        </label>
        <label className="text-xs text-zinc-600">
          Task spec v1 file (.jsonl or .jsonl.gz)
          <input
            className="mt-1 block text-sm"
            type="file"
            accept=".jsonl,.gz,.jsonl.gz,application/gzip"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </label>
        <Button variant="primary" disabled={!file || !pool || busy} onClick={start}>
          Upload
        </Button>
      </div>
      <div className="mt-3">
        {state.phase === "uploading" ? (
          <ProgressBar
            value={state.total ? state.sent / state.total : null}
            label={`Uploading ${(state.sent / 1048576).toFixed(1)} of ${(state.total / 1048576).toFixed(1)} MiB`}
          />
        ) : null}
        {state.phase === "importing" ? <ProgressBar value={null} label="Validating and importing…" /> : null}
        {state.phase === "error" ? <p className="text-sm text-red-700">{state.message}</p> : null}
        {state.phase === "done" && state.result.ok ? (
          <p className="text-sm text-green-700">
            Imported {state.result.imported} tasks ({state.result.exactDuplicates} exact duplicates,{" "}
            {state.result.normalizedDuplicates} normalized-code duplicates, {state.result.mergeProposals} group merge
            proposals).
          </p>
        ) : null}
        {state.phase === "done" && state.result.ok && state.result.duplicatesOfExisting > 0 ? (
          <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-800">
            Warning: {state.result.duplicatesOfExisting} of these tasks duplicate tasks already in the pool (same
            fingerprint; was this file imported before?). They were kept as separate tasks: review the merge proposals
            before creating a split, so that copies cannot land in both train and test.
          </p>
        ) : null}
        {state.phase === "done" && state.result.ok && (state.result.clusterProposals?.total ?? 0) > 0 ? (
          <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-800">
            {state.result.clusterProposals?.total} families of tasks in different source groups share one reference
            answer: see the cluster proposals on the pool page.
          </p>
        ) : null}
        {state.phase === "done" && !state.result.ok ? (
          <div className="text-sm">
            <p className="font-medium text-red-700">{state.result.problemCount} problem(s): nothing was imported.</p>
            <ul className="mt-2 max-h-72 overflow-auto rounded border border-red-200 bg-red-50 p-2 font-mono text-xs text-red-900">
              {state.result.problems.map((p, i) => (
                <li key={i}>{formatProblem(p, file?.name)}</li>
              ))}
            </ul>
          </div>
        ) : null}
      </div>
    </Section>
  );
}
