"use client";

import { Fragment, useState } from "react";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Badge } from "../../../_components/Badge";
import { Button } from "../../../_components/Button";
import { EmptyState } from "../../../_components/EmptyState";
import { ErrorBox } from "../../../_components/ErrorBox";
import { PageHeader, Section } from "../../../_components/PageHeader";
import { useTRPC, useTRPCClient } from "../../../_lib/trpc";
import {
  LAYER_TEXT,
  PAIR_PAGE_SIZE,
  PAIR_SOURCE_TEXT,
  SOURCE_TEXT,
  pairsFilter,
  pairsViewFromParams,
  pairsViewToParams,
  tallyPairs,
  type PairsView,
} from "../../../_lib/pairs";
import { MarginChart, PairFilters, RoundNotes } from "./PairFigures";
import { PairDetail } from "./PairDetail";

// The pair browser: an experiment's stored preference pairs, filtered by round,
// failing layer and sources (kept in the URL), with their figures on top; a row opens the pair.

const cols = ["task", "round", "source", "failing layer", "rejected", "chosen", "margin before", "weight"];

export function PairBrowser({ experimentId }: { experimentId: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const router = useRouter();
  const pathname = usePathname();
  const view = pairsViewFromParams(new URLSearchParams(useSearchParams()?.toString() ?? ""));
  const [open, setOpen] = useState<string | null>(null);
  const filter = pairsFilter(experimentId, view);
  const exp = useQuery(trpc.experiments.byId.queryOptions({ id: experimentId }));
  const figures = useQuery(trpc.pairs.figures.queryOptions(filter, { placeholderData: keepPreviousData }));
  const page = useQuery(
    trpc.pairs.browse.queryOptions(
      { ...filter, limit: PAIR_PAGE_SIZE, offset: view.page * PAIR_PAGE_SIZE },
      { placeholderData: keepPreviousData },
    ),
  );
  // The same JSONL as `agentlab pairs export` (every stored field), of the chosen round or all.
  const download = async () => {
    const r = await client.pairs.export.query({
      experimentId,
      ...(view.round !== null ? { round: view.round } : {}),
    });
    const url = URL.createObjectURL(new Blob([r.jsonl], { type: "application/x-ndjson" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `pairs-${experimentId}${view.round !== null ? `-round${view.round}` : ""}.jsonl`;
    a.click();
    URL.revokeObjectURL(url);
  };
  const go = (v: PairsView) => {
    const qs = pairsViewToParams(v);
    setOpen(null);
    router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
  };
  const error = exp.error ?? figures.error ?? page.error;
  if (error) return <ErrorBox error={error} />;
  const tally = figures.data ? tallyPairs(figures.data.groups, view.round) : null;
  const rows = page.data?.rows ?? [];
  const total = page.data?.total ?? 0;
  const from = view.page * PAIR_PAGE_SIZE;

  return (
    <div className="space-y-4">
      <PageHeader
        title="Preference pairs"
        description={
          <>
            Of{" "}
            <Link className="text-blue-700 hover:underline" href={`/experiments/${experimentId}`}>
              {exp.data?.name ?? "the experiment"}
            </Link>
            : chosen = a graded passing answer, rejected = a graded failing answer of the policy for the same train
            task.
          </>
        }
        actions={
          <Button onClick={() => void download()} disabled={!tally || tally.rounds.length === 0}>
            Export {view.round !== null ? `round ${view.round}` : "all rounds"} (JSONL)
          </Button>
        }
      />
      {tally && tally.rounds.length === 0 ? (
        <EmptyState title="No preference pairs stored for this experiment">
          Pairs are built by an sft+dpo recipe after the SFT start is selected on dev; an sft experiment has none.
        </EmptyState>
      ) : (
        <>
          <Section title="Pairs by round, failing layer and source">
            {tally && figures.data ? (
              <div className="space-y-4">
                <RoundNotes experimentId={experimentId} round={view.round} />
                <div className="grid gap-5 lg:grid-cols-2">
                  <PairFilters tally={tally} view={view} go={go} />
                  <MarginChart margins={figures.data.margins} />
                </div>
              </div>
            ) : (
              <p className="text-sm text-zinc-500">Loading…</p>
            )}
          </Section>
          <Section
            title={
              <span data-testid="pairs-shown">
                {page.data
                  ? `${total} pair${total === 1 ? "" : "s"} of ${page.data.tasks} task${page.data.tasks === 1 ? "" : "s"}`
                  : "Loading pairs…"}
              </span>
            }
            actions={
              <div className="flex items-center gap-2 text-xs">
                <span className="tabular-nums text-zinc-500">
                  {total ? `${from + 1}–${Math.min(from + rows.length, total)} of ${total}` : ""}
                </span>
                <Button size="sm" disabled={view.page === 0} onClick={() => go({ ...view, page: view.page - 1 })}>
                  Previous
                </Button>
                <Button
                  size="sm"
                  disabled={from + rows.length >= total}
                  onClick={() => go({ ...view, page: view.page + 1 })}
                >
                  Next
                </Button>
              </div>
            }
          >
            <div className="overflow-x-auto">
              <table className="w-full border-collapse text-left text-[13px]" data-testid="pair-table">
                <thead>
                  <tr className="border-b border-zinc-200 bg-zinc-50/80 text-[11px] font-semibold uppercase tracking-wide text-zinc-500">
                    {cols.map((c) => (
                      <th key={c} scope="col" className="whitespace-nowrap px-3 py-2">
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody className="divide-y divide-zinc-100">
                  {rows.map((p) => (
                    <Fragment key={p.id}>
                      <tr
                        className="cursor-pointer hover:bg-zinc-50"
                        onClick={() => setOpen(open === p.id ? null : p.id)}
                        aria-expanded={open === p.id}
                      >
                        <td className="px-3 py-1.5 font-mono text-xs">{p.taskKey}</td>
                        <td className="px-3 py-1.5 tabular-nums">{p.round}</td>
                        <td className="px-3 py-1.5 text-xs" data-testid="pair-source">
                          {PAIR_SOURCE_TEXT[p.pairSource]}
                        </td>
                        <td className="px-3 py-1.5">
                          <Badge tone={p.failingLayer === "syntax" ? "amber" : "red"}>
                            {LAYER_TEXT[p.failingLayer]}
                          </Badge>
                        </td>
                        <td className="px-3 py-1.5 text-xs">
                          {SOURCE_TEXT[p.rejectedSource]} · <span className="font-mono">{p.rejectedModelKey}</span> #
                          {p.rejectedSample}
                        </td>
                        <td className="px-3 py-1.5 text-xs">{SOURCE_TEXT[p.chosenSource]}</td>
                        <td className="px-3 py-1.5 text-right tabular-nums" data-testid="pair-margin">
                          {p.marginBefore.toFixed(3)}
                        </td>
                        <td className="px-3 py-1.5 text-right tabular-nums">{p.weight.toFixed(2)}</td>
                      </tr>
                      {open === p.id ? (
                        <tr>
                          <td colSpan={cols.length} className="bg-zinc-50/60 p-3">
                            <PairDetail pair={p} />
                          </td>
                        </tr>
                      ) : null}
                    </Fragment>
                  ))}
                  {page.data && rows.length === 0 ? (
                    <tr>
                      <td colSpan={cols.length} className="px-3 py-3 text-center text-xs text-zinc-500">
                        No pair matches these filters.
                      </td>
                    </tr>
                  ) : null}
                </tbody>
              </table>
            </div>
          </Section>
        </>
      )}
    </div>
  );
}
