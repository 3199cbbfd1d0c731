"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Section } from "../_components/PageHeader";
import { Fields } from "../_components/Stat";
import { Table } from "../_components/Table";
import { Ago } from "../_components/Time";
import { useTRPC } from "../_lib/trpc";
import { crossFileUsesText } from "../../client/cross-file";
import { AuditBadge, formatScore, ProcessBackendToggle, UnsandboxedBadge } from "./audit-ui";
import { InProcessMark } from "./InProcessMark";

const verdictTone = (v: string) => (v === "pass" ? "green" : v.startsWith("fail_") ? "red" : "amber");

/** The task's admission audit: reference 3× pass, buggy file fails hidden tests, mutation score, cross-file uses. */
export function AuditSection({ taskId, poolId }: { taskId: string; poolId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [unsandboxed, setUnsandboxed] = useState(false);
  const audits = useQuery(
    trpc.audits.list.queryOptions(
      { taskId },
      { refetchInterval: (q) => (q.state.data?.[0]?.status === "pending" ? 2000 : false) },
    ),
  );
  const start = useMutation(
    trpc.audits.create.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.audits.pathKey() }),
    }),
  );
  const latest = audits.data?.[0];
  const r = latest?.result ?? null;
  const audit = (rerun: boolean) =>
    start.mutate({ poolId, taskIds: [taskId], rerun, sandbox: unsandboxed ? "process" : "bwrap" });
  type Mutant = NonNullable<typeof r>["surviving"][number];
  return (
    <Section
      title="Admission audit"
      actions={
        <div className="flex items-center gap-2">
          <ProcessBackendToggle checked={unsandboxed} onChange={setUnsandboxed} />
          <Button
            size="sm"
            variant="primary"
            disabled={start.isPending || latest?.status === "pending"}
            onClick={() => audit(latest !== undefined)}
          >
            {latest ? "Re-audit" : "Start audit"}
          </Button>
        </div>
      }
    >
      {audits.error ? <ErrorBox error={audits.error} /> : null}
      {start.error ? <ErrorBox error={start.error} /> : null}
      {!latest ? (
        <p className="text-sm text-zinc-500">
          {audits.isLoading
            ? "Loading…"
            : "Not audited yet. An audit runs the reference 3× (flaky screening), the buggy file against the hidden tests, and AST mutants of the reference."}
        </p>
      ) : (
        <div className="space-y-3">
          <Fields
            items={[
              {
                label: "Status",
                value: (
                  <span className="flex items-center gap-1">
                    <AuditBadge state={latest.status} />
                    {latest.unsandboxed ? <UnsandboxedBadge /> : null}
                    {latest.status === "pending" && latest.jobState ? (
                      <span className="text-xs text-zinc-500">job {latest.jobState}</span>
                    ) : null}
                  </span>
                ),
              },
              {
                label: "Reference runs",
                value: r ? (
                  <span className="flex gap-1">
                    {r.referenceVerdicts.map((v, i) => (
                      <Badge key={i} tone={verdictTone(v)}>
                        {v}
                      </Badge>
                    ))}
                  </span>
                ) : (
                  "—"
                ),
              },
              {
                label: "Buggy file",
                value: r ? (
                  <span title={(r.buggyDetail ?? []).join("\n")}>
                    <Badge tone={r.buggyVerdict === "pass" ? "red" : "green"}>{r.buggyVerdict}</Badge>
                    {r.buggyDetail?.[0] ? <span className="ml-2 text-xs text-zinc-500">{r.buggyDetail[0]}</span> : null}
                  </span>
                ) : (
                  "—"
                ),
              },
              {
                label: "Grading",
                value: !r ? (
                  "—"
                ) : r.needsInProcess ? (
                  <span className="flex flex-col gap-1">
                    <span>
                      <Badge
                        tone="red"
                        title="the reference passes only in-process; that weaker mode needs an admin's mark"
                      >
                        refused: needs in-process
                      </Badge>
                    </span>
                    <InProcessMark taskId={taskId} marked={null} onMarked={() => audit(true)} />
                  </span>
                ) : r.isolation === "in_process" ? (
                  <span className="flex flex-col gap-1">
                    <span>
                      <Badge
                        tone="amber"
                        title="the candidate's module runs inside the pytest process: the weaker mode (docs/grading.md)"
                      >
                        in-process
                      </Badge>
                    </span>
                    <span className="text-xs text-zinc-600">{r.isolationReason}</span>
                    <InProcessMark taskId={taskId} marked={r.isolationReason} onMarked={() => audit(true)} />
                  </span>
                ) : (
                  <span title="tests run in a judge process; the candidate's module in a separate sandboxed process, reached by value">
                    isolated judge
                  </span>
                ),
              },
              {
                label: "Mutation score",
                value: r ? `${formatScore(r.mutationScore)} (${r.mutantsKilled}/${r.mutantsTotal} killed)` : "—",
              },
              {
                label: "Cross-file",
                value: r ? (
                  <span
                    className="font-mono text-xs"
                    title="the dependency-file symbols the reference fix reads (by AST); none: it reads no dependency"
                  >
                    {crossFileUsesText(r.crossFile)}
                  </span>
                ) : (
                  "—"
                ),
              },
              { label: "Backend", value: latest.sandbox },
              {
                label: "Audited",
                value:
                  latest.sandbox === "build-time" ? (
                    <>
                      when the built-in pool was built (scripts/build-builtin-pool.ts: reference 3×, buggy file; no
                      mutation testing) · {latest.graderVersion}
                    </>
                  ) : (
                    <>
                      <Ago at={latest.finishedAt ?? latest.createdAt} /> · round {latest.round} ·{" "}
                      {latest.jobId ? (
                        <Link className="underline" href={`/jobs/${latest.jobId}`}>
                          job
                        </Link>
                      ) : (
                        "job gone"
                      )}
                    </>
                  ),
              },
            ]}
          />
          {latest.error ? <p className="text-sm text-amber-800">{latest.error}</p> : null}
          {r && r.reasons.length > 0 ? (
            <ul className="list-disc pl-5 text-sm text-red-700">
              {r.reasons.map((x, i) => (
                <li key={i}>{x}</li>
              ))}
            </ul>
          ) : null}
          {r && r.surviving.length > 0 ? (
            <div>
              <h3 className="mb-1 text-sm font-medium">
                Surviving mutants <span className="text-zinc-500">(the hidden tests do not catch these changes)</span>
              </h3>
              <Table<Mutant>
                bare
                rows={r.surviving}
                rowKey={(m) => `${m.path}:${m.line}:${m.operator}:${m.description}`}
                columns={[
                  {
                    key: "op",
                    header: "Operator",
                    cell: (m) => <span className="font-mono text-xs">{m.operator}</span>,
                  },
                  {
                    key: "where",
                    header: "Line",
                    className: "tabular-nums",
                    cell: (m) => (
                      <span className="font-mono text-xs">
                        {m.path}:{m.line}
                      </span>
                    ),
                  },
                  { key: "what", header: "Change", cell: (m) => m.description },
                ]}
              />
            </div>
          ) : null}
          {audits.data && audits.data.length > 1 ? (
            <p className="text-xs text-zinc-500">
              Earlier:{" "}
              {audits.data
                .slice(1)
                .map(
                  (a) =>
                    `round ${a.round} ${a.status}${a.mutationScore !== null ? ` ${formatScore(a.mutationScore)}` : ""}`,
                )
                .join(" · ")}
            </p>
          ) : null}
        </div>
      )}
    </Section>
  );
}
