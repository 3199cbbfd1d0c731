"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ArchiveControls } from "../_components/ArchiveControls";
import { Badge } from "../_components/Badge";
import { Button } from "../_components/Button";
import { CodeViewer } from "../_components/CodeViewer";
import { ErrorBox } from "../_components/ErrorBox";
import { PageHeader, Section } from "../_components/PageHeader";
import { Fields } from "../_components/Stat";
import { BudgetForm } from "./BudgetForm";
import { useTRPC, useTRPCClient } from "../_lib/trpc";
import { canAct, useViewer } from "../_lib/viewer";
import { QualityBadge } from "./QualityBadge";

const SAMPLE_PAGE = 20;

export function DatasetDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const qc = useQueryClient();
  const canAlter = canAct(useViewer(), "member");
  const ds = useQuery(
    trpc.datasets.byId.queryOptions(
      { id },
      { refetchInterval: (q) => (q.state.data?.replays.some((r) => r.state === "grading") ? 2_000 : false) },
    ),
  );
  // Keyset pages (`after` = the last ordinal of the page before), with the total from the snapshot.
  const [pages, setPages] = useState<(number | undefined)[]>([undefined]);
  const after = pages.at(-1);
  const samples = useQuery(
    trpc.datasets.samples.queryOptions({ id, limit: SAMPLE_PAGE, ...(after !== undefined ? { after } : {}) }),
  );
  const shownFrom = (pages.length - 1) * SAMPLE_PAGE;
  const shown = samples.data?.items.length ?? 0;
  const next = samples.data?.nextCursor ?? null;
  const replay = useMutation(
    trpc.datasets.replay.mutationOptions({
      onSuccess: () => qc.invalidateQueries({ queryKey: trpc.datasets.byId.queryKey({ id }) }),
    }),
  );
  const [model, setModel] = useState("");
  const tokenize = useMutation(trpc.datasets.tokenize.mutationOptions());
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const d = ds.data;
  const nav = useRouter();
  const archive = useMutation(trpc.datasets.archive.mutationOptions({ onSuccess: () => void ds.refetch() }));
  const remove = useMutation(trpc.datasets.delete.mutationOptions({ onSuccess: () => nav.push("/datasets") }));
  // A study's negative control: this snapshot's answers rotated across its prompts.
  const shuffle = useMutation(
    trpc.datasets.shuffle.mutationOptions({ onSuccess: (child) => nav.push(`/datasets/${child.id}`) }),
  );

  const download = async () => {
    try {
      const res = await client.datasets.export.query({ id });
      const url = URL.createObjectURL(new Blob([res.jsonl], { type: "application/jsonl" }));
      const a = Object.assign(document.createElement("a"), {
        href: url,
        download: `${d?.name ?? "dataset"}-${res.hash.slice(0, 12)}.jsonl`,
      });
      a.click();
      URL.revokeObjectURL(url);
    } catch (err) {
      setDownloadError(err);
    }
  };

  return (
    <div className="space-y-5">
      <PageHeader
        title={d?.name ?? "Dataset"}
        meta={
          d ? (
            <>
              {d.oracleSamples > 0 ? <Badge tone="amber">{d.oracleSamples} reference-oracle samples</Badge> : null}
              <QualityBadge quality={d.quality} />
              <span className="font-mono">{d.hash}</span>
              <ArchiveControls
                what="dataset"
                name={d.name}
                archivedAt={d.archivedAt}
                archive={{ ...archive, mutate: () => archive.mutate({ id, archived: true }) }}
                restore={{ ...archive, mutate: () => archive.mutate({ id, archived: false }) }}
                remove={{ ...remove, mutate: () => remove.mutate({ id }) }}
                deleteNote="Refused while an experiment used it or a replayed snapshot derives from it."
              />
            </>
          ) : null
        }
        actions={
          <>
            <Button onClick={() => void download()}>Export JSONL</Button>
            {canAlter && d && d.quality !== "shuffled_control" ? (
              <Button
                disabled={shuffle.isPending}
                title="Each prompt answered with another task's answer: the negative control of a data study"
                onClick={() => shuffle.mutate({ id, seed: 1 })}
              >
                Make a shuffled control
              </Button>
            ) : null}
            {/* A replay keeps what still passes: only a verified snapshot has something to keep. */}
            {canAlter && d?.quality === "verified" ? (
              <Button variant="primary" disabled={replay.isPending} onClick={() => replay.mutate({ id })}>
                Replay (re-grade all)
              </Button>
            ) : null}
          </>
        }
      />
      <ErrorBox error={ds.error ?? replay.error ?? tokenize.error ?? shuffle.error ?? downloadError} />
      {d ? (
        <Section title="Snapshot">
          <Fields
            items={[
              { label: "Samples", value: d.sampleCount },
              { label: "Tasks covered", value: d.taskCount },
              {
                label: "Prompt template",
                value: <span className="font-mono text-xs">{d.promptHash.slice(0, 16)}</span>,
              },
              {
                label: "Derived from",
                value: d.parentId ? (
                  <Link className="text-blue-700 underline" href={`/datasets/${d.parentId}`}>
                    {d.parentId.slice(0, 8)}
                  </Link>
                ) : (
                  "—"
                ),
              },
              {
                label: "Supervised tokens",
                value: d.tokenCounts
                  ? `${d.tokenCounts.supervisedTokens.toLocaleString()} of ${d.tokenCounts.totalTokens.toLocaleString()} (${d.tokenCounts.model})`
                  : "not computed",
              },
              ...(d.tokenCounts?.overLength
                ? [
                    {
                      // Measured at an experiment's dataset stage, dropped from the child it trained on
                      label: `Over ${d.tokenCounts.overLength.maxLength} tokens`,
                      value: d.tokenCounts.overLength.count
                        ? `${d.tokenCounts.overLength.count} sample(s), dropped before training: ${d.tokenCounts.overLength.taskIds.join(", ")}`
                        : "none",
                    },
                  ]
                : []),
            ]}
          />
          {canAlter && d.tokenCounts && d.perSampleCounts ? (
            <BudgetForm id={id} supervisedTokens={d.tokenCounts.supervisedTokens} />
          ) : null}
          {canAlter && !d.tokenCounts ? (
            <div className="mt-3 flex gap-2 text-sm">
              <input
                className="h-8 rounded-md border border-zinc-300 px-2"
                placeholder="student model (path or id)"
                value={model}
                onChange={(e) => setModel(e.target.value)}
              />
              <Button disabled={!model || tokenize.isPending} onClick={() => tokenize.mutate({ id, model })}>
                Count tokens on an agent
              </Button>
              {tokenize.data ? (
                <span className="text-zinc-500">job {tokenize.data.jobId.slice(0, 8)} queued</span>
              ) : null}
            </div>
          ) : null}
        </Section>
      ) : null}
      {d?.replays.length ? (
        <Section title="Replays">
          <ul className="space-y-1 text-sm">
            {d.replays.map((r) => (
              <li key={r.id}>
                {r.state === "grading"
                  ? `grading ${Object.keys(r.jobs).length} samples…`
                  : `kept ${r.kept ?? 0}, dropped ${r.dropped?.length ?? 0}`}
                {r.resultDatasetId ? (
                  <>
                    {" "}
                    →{" "}
                    <Link className="text-blue-700 underline" href={`/datasets/${r.resultDatasetId}`}>
                      {r.resultDatasetId === d.id ? "this snapshot is verified" : "verified snapshot"}
                    </Link>
                  </>
                ) : null}
                {r.dropped?.map((x) => (
                  <div key={x.ordinal} className="pl-4 text-xs text-zinc-600">
                    {x.taskKey}: {x.verdict} {x.reasons.join("; ")}
                  </div>
                ))}
              </li>
            ))}
          </ul>
        </Section>
      ) : null}
      <Section
        title="Samples"
        actions={
          <span className="flex items-center gap-2 text-xs text-zinc-600" data-testid="dataset-samples-shown">
            {shown ? `${shownFrom + 1}–${shownFrom + shown}` : "0"} of {ds.data?.sampleCount ?? "?"}
            <Button size="sm" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
              Previous
            </Button>
            <Button size="sm" disabled={next === null} onClick={() => next !== null && setPages([...pages, next])}>
              Next
            </Button>
          </span>
        }
      >
        <div className="space-y-4">
          {(samples.data?.items ?? []).map((s) => (
            <details key={s.ordinal}>
              <summary className="cursor-pointer text-sm">
                <span className="font-mono text-xs">{s.taskKey}</span>
                {s.oracle ? (
                  <span className="ml-2">
                    <Badge tone="amber">oracle</Badge>
                  </span>
                ) : null}
              </summary>
              {s.messages.map((m, i) => (
                <div key={i} className="mt-2">
                  <div className="text-xs font-semibold text-zinc-500">{m.role}</div>
                  <CodeViewer code={m.content} language="text" maxHeight={300} />
                </div>
              ))}
            </details>
          ))}
        </div>
      </Section>
    </div>
  );
}
