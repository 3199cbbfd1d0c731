"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { ProgressBar } from "../_components/ProgressBar";
import { useTRPC } from "../_lib/trpc";
import { crossFileCountText } from "../../client/cross-file";
import { AUDIT_STATES, AuditBadge, ProcessBackendToggle } from "../tasks/audit-ui";

/** Pool-wide admission audit: counts by status and of cross-file tasks, progress while audits run, and "Audit all". */
export function AuditPanel({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [unsandboxed, setUnsandboxed] = useState(false);
  const summary = useQuery(
    trpc.audits.summary.queryOptions(
      { poolId },
      { refetchInterval: (q) => ((q.state.data?.byState.pending ?? 0) > 0 ? 3000 : false) },
    ),
  );
  const start = useMutation(
    trpc.audits.create.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.audits.pathKey() }),
    }),
  );
  const s = summary.data;
  const done = s ? s.byState.passed + s.byState.failed + s.byState.error : 0;
  const inFlight = s ? done + s.byState.pending : 0;
  return (
    <Section
      title="Admission audit"
      actions={
        <div className="flex items-center gap-2">
          <ProcessBackendToggle checked={unsandboxed} onChange={setUnsandboxed} />
          <Button
            size="sm"
            variant="primary"
            disabled={start.isPending}
            onClick={() => start.mutate({ poolId, sandbox: unsandboxed ? "process" : "bwrap" })}
          >
            Audit all
          </Button>
        </div>
      }
    >
      {summary.error ? <ErrorBox error={summary.error} /> : null}
      {start.error ? <ErrorBox error={start.error} /> : null}
      {start.data ? (
        <p className="mb-2 text-xs text-zinc-500">
          Queued {start.data.enqueued} audit{start.data.enqueued === 1 ? "" : "s"}
          {start.data.finished ? ` (${start.data.finished} reuse an identical task's finished audit)` : ""};{" "}
          {start.data.skipped} already audited by this grader.
        </p>
      ) : null}
      {s ? (
        <div className="space-y-3">
          <ul className="flex flex-wrap gap-4 text-sm">
            {AUDIT_STATES.map((st) => (
              <li key={st} className="flex items-center gap-1">
                <AuditBadge state={st} />
                <span className="tabular-nums">{s.byState[st].toLocaleString()}</span>
              </li>
            ))}
            <li
              className="text-xs text-zinc-600"
              title="tasks whose reference fix reads a dependency file's symbol, by their newest audit that recorded it"
            >
              cross-file: {crossFileCountText(s.crossFile)}
            </li>
            {s.unsandboxed > 0 ? (
              <li className="text-xs text-amber-800">{s.unsandboxed} audited without a sandbox</li>
            ) : null}
          </ul>
          {s.byState.pending > 0 ? (
            <ProgressBar
              value={inFlight > 0 ? done / inFlight : null}
              label={`${done.toLocaleString()} of ${inFlight.toLocaleString()} audited · ${s.running} running now`}
            />
          ) : null}
        </div>
      ) : (
        <p className="text-sm text-zinc-500">Loading…</p>
      )}
    </Section>
  );
}
