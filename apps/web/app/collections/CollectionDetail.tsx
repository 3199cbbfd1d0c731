"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "../_components/Button";
import { CodeViewer } from "../_components/CodeViewer";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { Fields, Stat } from "../_components/Stat";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { OracleBadge, StateBadge, VerdictBadge } from "../_components/StatusBadges";
import { usd } from "../../client/format";
import { CollectionBars } from "./CollectionBars";

const PAGE = 200;

export function CollectionDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const canAlter = canAct(useViewer(), "member");
  const col = useQuery(
    trpc.collections.byId.queryOptions(
      { id },
      { refetchInterval: (q) => (["done", "failed", "canceled"].includes(q.state.data?.state ?? "") ? false : 2_000) },
    ),
  );
  // Keyset pages of 200 tasks (`after` = the last task id of the page before), never a silent cut.
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const after = pages.at(-1);
  const tasks = useQuery(
    trpc.collections.tasks.queryOptions(
      { id, limit: PAGE, ...(after !== undefined ? { after } : {}) },
      { refetchInterval: 5_000 },
    ),
  );
  const taskRows = tasks.data ?? [];
  const lastKey = taskRows.at(-1)?.taskKey;
  const ledger = useQuery(trpc.collections.ledger.queryOptions({ by: "provider", collectionId: id }));
  const cancel = useMutation(trpc.collections.cancel.mutationOptions());
  const [taskRowId, setTaskRowId] = useState<string | null>(null);
  const c = col.data;

  return (
    <div className="space-y-5">
      <PageHeader
        title={c ? c.name : "Collection"}
        meta={
          c ? (
            <>
              <StateBadge state={c.state} />
              {c.oracle ? <OracleBadge /> : null}
              <span className="font-mono">{c.model}</span>
            </>
          ) : null
        }
        actions={
          c && canAlter && (c.state === "running" || c.state === "queued") ? (
            <Button
              variant="danger"
              onClick={() =>
                window.confirm(
                  "Cancel this collection? Queued teacher requests and grade jobs stop; candidates collected so far are kept.",
                ) && cancel.mutate({ id })
              }
            >
              Cancel
            </Button>
          ) : null
        }
      />
      <ErrorBox error={col.error ?? cancel.error} />
      {c ? (
        <>
          {c.stopReason ? (
            <div className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
              {c.stopReason}
            </div>
          ) : null}
          <div className="grid grid-cols-2 gap-3 md:grid-cols-5">
            <Stat
              label="Spent"
              value={usd(c.costUsd)}
              hint={c.budgetUsd !== null ? `cap ${usd(c.budgetUsd)}` : "no cap"}
            />
            <Stat label="Reused" value={c.reused} hint={`${usd(c.costSavedUsd)} saved`} />
            <Stat label="Tokens in" value={c.tokensIn.toLocaleString()} />
            <Stat label="Tokens out" value={c.tokensOut.toLocaleString()} />
            <Stat
              label="Pass"
              value={c.verdicts.pass ?? 0}
              hint={Object.entries(c.verdicts)
                .map(([k, v]) => `${k} ${v}`)
                .join(" · ")}
            />
          </div>
          <Section title="Progress">
            <CollectionBars c={c} />
          </Section>
          <Section title="Settings">
            <Fields
              items={[
                { label: "Split", value: <span className="font-mono text-xs">{c.splitId}</span> },
                { label: "Parts", value: c.parts.join(", ") },
                { label: "Samples per task", value: c.nSamples },
                { label: "Sampling", value: <span className="font-mono text-xs">{JSON.stringify(c.params)}</span> },
                {
                  label: "Prompt template",
                  value: <span className="font-mono text-xs">{c.promptHash.slice(0, 16)}</span>,
                },
                {
                  label: "Concurrency / retries / timeout",
                  value: `${c.concurrency} / ${c.maxRetries} / ${c.timeoutMs} ms`,
                },
                {
                  label: "Ledger",
                  value:
                    (ledger.data ?? [])
                      .map((l) => `${l.label ?? "?"}: ${l.calls} calls, ${usd(l.costUsd)}`)
                      .join("; ") || "—",
                },
              ]}
            />
          </Section>
        </>
      ) : null}
      <Section
        title="Tasks"
        actions={
          <span className="flex items-center gap-2 text-xs text-zinc-600" data-testid="collection-tasks-shown">
            {(pages.length - 1) * PAGE + (taskRows.length ? 1 : 0)}–{(pages.length - 1) * PAGE + taskRows.length} of{" "}
            {c?.tasksTotal ?? "?"} tasks
            <Button size="sm" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
              Previous
            </Button>
            <Button
              size="sm"
              disabled={taskRows.length < PAGE || lastKey === undefined}
              onClick={() => setPages([...pages, lastKey])}
            >
              Next
            </Button>
          </span>
        }
      >
        <p className="mb-2 text-xs text-zinc-500">Click a task to open its candidates below.</p>
        <Table
          rows={taskRows}
          rowKey={(t) => t.taskRowId}
          onRowClick={(t) => {
            setTaskRowId(t.taskRowId);
            // The candidates open below the table: bring them into view, or the click seems to do nothing.
            requestAnimationFrame(() =>
              document.getElementById("candidates")?.scrollIntoView({ behavior: "smooth", block: "start" }),
            );
          }}
          rowClassName={(t) => (t.taskRowId === taskRowId ? "bg-blue-50/60" : "")}
          bare
          columns={[
            { key: "task", header: "Task", cell: (t) => <span className="font-mono text-xs">{t.taskKey}</span> },
            { key: "samples", header: "Samples", cell: (t) => t.samples },
            { key: "graded", header: "Graded", cell: (t) => t.graded },
            { key: "passed", header: "Passed", cell: (t) => t.passed },
            { key: "malformed", header: "Malformed", cell: (t) => t.malformed },
            { key: "reused", header: "Reused", cell: (t) => t.reused },
          ]}
        />
      </Section>
      {taskRowId ? (
        <div id="candidates">
          <CandidateBrowser collectionId={id} taskRowId={taskRowId} />
        </div>
      ) : null}
    </div>
  );
}

function CandidateBrowser({ collectionId, taskRowId }: { collectionId: string; taskRowId: string }) {
  const trpc = useTRPC();
  const cands = useQuery(trpc.collections.candidates.queryOptions({ id: collectionId, taskRowId }));
  return (
    <Section title="Candidates" className="scroll-mt-4">
      <ErrorBox error={cands.error} />
      <div className="space-y-6">
        {(cands.data ?? []).map(({ sampleIndex, reused, candidate: c }) => (
          <div key={c.id} className="space-y-2">
            <div className="flex flex-wrap items-center gap-2 text-sm">
              <span className="font-medium">sample {sampleIndex}</span>
              <VerdictBadge verdict={c.verdict} />
              {c.oracle ? <OracleBadge /> : null}
              {reused ? <span className="text-xs text-zinc-500">from cache</span> : null}
              <span className="text-xs text-zinc-500">
                {c.tokensIn}/{c.tokensOut} tokens · {usd(c.costUsd)} · {c.latencyMs} ms · finish {c.finishReason ?? "—"}
              </span>
              {c.gradeResult?.unsandboxed ? <span className="text-xs text-amber-700">graded unsandboxed</span> : null}
            </div>
            {c.verdictReasons?.length ? (
              <ul className="list-disc pl-5 text-xs text-zinc-700">
                {c.verdictReasons.map((r, i) => (
                  <li key={i}>{r}</li>
                ))}
              </ul>
            ) : null}
            <CodeViewer code={c.answer} language="text" path="answer" maxHeight={360} />
            {c.gradeResult ? (
              <details className="text-xs">
                <summary className="cursor-pointer text-zinc-600">
                  grader output ({c.gradeResult.tests.length} tests, {c.gradeResult.graderVersion})
                </summary>
                <ul className="mt-1 font-mono">
                  {c.gradeResult.tests.map((t) => (
                    <li key={t.id}>
                      {t.outcome.padEnd(7)} [{t.layer}] {t.id}
                    </li>
                  ))}
                </ul>
                {c.gradeResult.stdoutTail ? (
                  <CodeViewer code={c.gradeResult.stdoutTail} path="stdout" maxHeight={200} />
                ) : null}
                {c.gradeResult.stderrTail ? (
                  <CodeViewer code={c.gradeResult.stderrTail} path="stderr" maxHeight={200} />
                ) : null}
              </details>
            ) : null}
          </div>
        ))}
      </div>
    </Section>
  );
}
