"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { Section } from "../_components/PageHeader";
import { Table } from "../_components/Table";
import { useTRPC } from "../_lib/trpc";
import { AUDIT_STATES, AuditBadge, auditStateLabel, type AuditState } from "../tasks/audit-ui";

const PAGE = 50;

/** Keyset-paginated task list with prefix search over id and source group (stays fast at 10k+ tasks). */
export function TaskBrowser({ poolId }: { poolId: string }) {
  const trpc = useTRPC();
  const [input, setInput] = useState("");
  const [q, setQ] = useState("");
  const [audit, setAudit] = useState<AuditState | "">("");
  // Cursors of the pages visited so far: "previous" pops, "next" pushes the server's cursor.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  useEffect(() => {
    const t = setTimeout(() => {
      setQ(input.trim());
      setCursors([undefined]);
    }, 250);
    return () => clearTimeout(t);
  }, [input]);
  const page = useQuery(
    trpc.tasks.list.queryOptions(
      { poolId, q: q || undefined, audit: audit || undefined, after, limit: PAGE },
      { placeholderData: (prev) => prev },
    ),
  );
  type Row = NonNullable<typeof page.data>["items"][number];
  const next = page.data?.nextCursor;
  return (
    <Section
      title="Tasks"
      actions={
        <div className="flex gap-2">
          <select
            aria-label="Audit status"
            className="h-7 rounded-md border border-zinc-300 bg-white px-2 text-xs"
            value={audit}
            onChange={(e) => {
              setAudit(e.target.value as AuditState | "");
              setCursors([undefined]);
            }}
          >
            <option value="">any audit status</option>
            {AUDIT_STATES.map((st) => (
              <option key={st} value={st}>
                {auditStateLabel(st)}
              </option>
            ))}
          </select>
          <input
            aria-label="Search tasks"
            className="h-7 w-64 rounded-md border border-zinc-300 px-2 text-xs"
            placeholder="id or source group prefix"
            value={input}
            onChange={(e) => setInput(e.target.value)}
          />
        </div>
      }
    >
      {page.error ? <ErrorBox error={page.error} /> : null}
      <Table<Row>
        bare
        rows={page.data?.items ?? []}
        rowKey={(t) => t.id}
        rowHref={(t) => `/tasks/${t.id}`}
        empty={page.isLoading ? null : <p className="text-sm text-zinc-500">No tasks match.</p>}
        columns={[
          { key: "id", header: "Task", cell: (t) => <span className="font-mono text-xs">{t.taskId}</span> },
          {
            key: "group",
            header: "Group",
            cell: (t) => (
              <span className="font-mono text-xs">
                {t.groupKey}
                {t.groupKey !== t.sourceGroup ? <span className="text-zinc-400"> (was {t.sourceGroup})</span> : null}
              </span>
            ),
          },
          { key: "audit", header: "Audit", cell: (t) => <AuditBadge state={t.audit} /> },
          { key: "origin", header: "Origin", cell: (t) => t.origin || "—" },
          {
            key: "instr",
            header: "Instruction",
            className: "max-w-md truncate text-zinc-600",
            cell: (t) => t.instruction,
          },
          { key: "fp", header: "Fingerprint", cell: (t) => <Mono value={t.fingerprint} /> },
        ]}
      />
      <div className="mt-3 flex items-center justify-between text-xs text-zinc-500">
        <span>
          Page {cursors.length}
          {page.isFetching ? " · loading…" : ""}
        </span>
        <div className="flex gap-2">
          <Button size="sm" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous
          </Button>
          <Button size="sm" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
            Next
          </Button>
        </div>
      </div>
    </Section>
  );
}
