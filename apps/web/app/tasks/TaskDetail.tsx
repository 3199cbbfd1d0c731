"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { CodeViewer } from "../_components/CodeViewer";
import { ErrorBox } from "../_components/ErrorBox";
import { Mono } from "../_components/Mono";
import { PageHeader, Section } from "../_components/PageHeader";
import { Fields } from "../_components/Stat";
import { useTRPC } from "../_lib/trpc";
import { AuditSection } from "./AuditSection";

export function TaskDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.tasks.byId.queryOptions({ id }));
  // The reference solution is for auditing: hidden until asked for, so it is not read by accident.
  const [showReference, setShowReference] = useState(false);
  if (detail.error) return <ErrorBox error={detail.error} onRetry={() => void detail.refetch()} />;
  const d = detail.data;
  if (!d) return <p className="text-sm text-zinc-500">Loading…</p>;
  const t = d.task;
  const files = (title: string, list: { path: string; content: string; role?: string }[]) => (
    <Section title={title}>
      <div className="space-y-3">
        {list.length === 0 ? <p className="text-sm text-zinc-500">None.</p> : null}
        {list.map((f) => (
          <div key={f.path}>
            {f.role ? (
              <div className="mb-1">
                <Badge tone={f.role === "main" ? "blue" : "neutral"}>{f.role}</Badge>
              </div>
            ) : null}
            <CodeViewer code={f.content} path={f.path} />
          </div>
        ))}
      </div>
    </Section>
  );
  return (
    <div className="space-y-4">
      <PageHeader
        title={<span className="font-mono">{t.taskId}</span>}
        description={
          <Link className="underline" href={`/pools/${t.poolId}`}>
            back to pool
          </Link>
        }
        meta={
          <>
            fingerprint <Mono value={t.fingerprint} chars={16} copy />
          </>
        }
      />
      <Section title="Task">
        <Fields
          items={[
            { label: "Source group", value: <span className="font-mono text-xs">{t.sourceGroup}</span> },
            { label: "Effective group", value: <span className="font-mono text-xs">{t.groupKey}</span> },
            { label: "Language", value: t.language },
            { label: "Origin", value: t.origin || "—" },
            { label: "Normalized code hash", value: <Mono value={t.normalizedHash} chars={16} /> },
            { label: "Size", value: `${t.sizeBytes.toLocaleString()} bytes` },
            { label: "Metadata", value: <code className="text-xs">{JSON.stringify(t.metadata)}</code> },
          ]}
        />
        <p className="mt-3 whitespace-pre-wrap text-sm text-zinc-800">{t.instruction}</p>
      </Section>
      <AuditSection taskId={t.id} poolId={t.poolId} />
      {files("Files", t.files)}
      {files("Public tests", t.publicTests)}
      {files("Hidden tests", t.hiddenTests)}
      <Section
        title="Reference solution"
        actions={
          <Button size="sm" onClick={() => setShowReference((v) => !v)}>
            {showReference ? "Hide" : "Show"} reference
          </Button>
        }
      >
        {showReference ? (
          <div className="space-y-3">
            {t.reference.map((f) => (
              <CodeViewer key={f.path} code={f.content} path={f.path} />
            ))}
          </div>
        ) : (
          <p className="text-sm text-zinc-500">
            Hidden. It is never shown to a model unless the reference teacher is chosen.
          </p>
        )}
      </Section>
      <Section title="Duplicates in this pool">
        {d.duplicates.length === 0 ? (
          <p className="text-sm text-zinc-500">None: no other task shares this fingerprint or normalized code.</p>
        ) : (
          <ul className="space-y-1 text-sm">
            {d.duplicates.map((x) => (
              <li key={x.id}>
                <Link className="font-mono text-xs underline" href={`/tasks/${x.id}`}>
                  {x.taskId}
                </Link>{" "}
                <Badge tone={x.exact ? "red" : "amber"}>{x.exact ? "exact" : "normalized code"}</Badge>{" "}
                <span className="text-xs text-zinc-500">group {x.groupKey}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Grading history">
        <p className="text-sm text-zinc-500">
          Not listed per task yet: grade jobs are not indexed by task, so find them on the{" "}
          <Link className="underline" href="/jobs">
            Jobs
          </Link>{" "}
          page. Admission audits are above.
        </p>
      </Section>
    </div>
  );
}
