"use client";

import type { ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { ChosenSource, FailingLayer, PairSource, RejectedSource } from "@agentlab/core";
import { Histogram } from "../../../_components/Histogram";
import {
  LAYER_TEXT,
  PAIR_SOURCE_TEXT,
  SOURCE_TEXT,
  marginHistogram,
  withFilter,
  type PairTally,
  type PairsView,
} from "../../../_lib/pairs";
import { useTRPC } from "../../../_lib/trpc";

// The browser's header: the pairs of the chosen round by failing layer and by source (each a
// filter button with its count) and the histogram of the margins before training of the pairs the
// filters select.

function Chip({
  pressed,
  onClick,
  children,
  count,
}: {
  pressed: boolean;
  onClick: () => void;
  children: ReactNode;
  count: number;
}) {
  return (
    <button
      type="button"
      aria-pressed={pressed}
      onClick={onClick}
      className={`rounded-full border px-2 py-0.5 text-xs ${pressed ? "border-blue-600 bg-blue-50 text-blue-800" : "border-zinc-300 bg-white text-zinc-700"}`}
    >
      {children} <span className="tabular-nums text-zinc-500">{count}</span>
    </button>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex flex-wrap items-center gap-1.5">
      <span className="w-28 shrink-0 text-xs font-medium text-zinc-500">{label}</span>
      {children}
    </div>
  );
}

export function PairFilters({ tally, view, go }: { tally: PairTally; view: PairsView; go: (v: PairsView) => void }) {
  return (
    <div className="space-y-2" data-testid="pair-filters">
      <Row label="Round">
        <div role="group" aria-label="round" className="flex flex-wrap gap-1">
          <Chip
            pressed={view.round === null}
            onClick={() => go(withFilter(view, { round: null }))}
            count={tally.rounds.reduce((a, r) => a + r.pairs, 0)}
          >
            all rounds
          </Chip>
          {tally.rounds.map((r) => (
            <Chip
              key={r.round}
              pressed={view.round === r.round}
              onClick={() => go(withFilter(view, { round: r.round }))}
              count={r.pairs}
            >
              round {r.round}
            </Chip>
          ))}
        </div>
      </Row>
      <Row label="Failing layer">
        <div role="group" aria-label="failing layer" className="flex flex-wrap gap-1">
          <Chip pressed={view.layer === null} onClick={() => go(withFilter(view, { layer: null }))} count={tally.total}>
            any
          </Chip>
          {FailingLayer.options.map((l) => (
            <Chip
              key={l}
              pressed={view.layer === l}
              onClick={() => go(withFilter(view, { layer: l }))}
              count={tally.byLayer[l]}
            >
              {LAYER_TEXT[l]}
            </Chip>
          ))}
        </div>
      </Row>
      <Row label="Pair source">
        <div role="group" aria-label="pair source" className="flex flex-wrap gap-1">
          <Chip
            pressed={view.source === null}
            onClick={() => go(withFilter(view, { source: null }))}
            count={tally.total}
          >
            any
          </Chip>
          {PairSource.options.map((s) => (
            <Chip
              key={s}
              pressed={view.source === s}
              onClick={() => go(withFilter(view, { source: s }))}
              count={tally.bySource[s]}
            >
              {PAIR_SOURCE_TEXT[s]}
            </Chip>
          ))}
        </div>
      </Row>
      <Row label="Rejected from">
        <div role="group" aria-label="rejected source" className="flex flex-wrap gap-1">
          <Chip
            pressed={view.rejected === null}
            onClick={() => go(withFilter(view, { rejected: null }))}
            count={tally.total}
          >
            any
          </Chip>
          {RejectedSource.options.map((s) => (
            <Chip
              key={s}
              pressed={view.rejected === s}
              onClick={() => go(withFilter(view, { rejected: s }))}
              count={tally.byRejected[s]}
            >
              {SOURCE_TEXT[s]}
            </Chip>
          ))}
        </div>
      </Row>
      <Row label="Chosen from">
        <div role="group" aria-label="chosen source" className="flex flex-wrap gap-1">
          <Chip
            pressed={view.chosen === null}
            onClick={() => go(withFilter(view, { chosen: null }))}
            count={tally.total}
          >
            any
          </Chip>
          {ChosenSource.options.map((s) => (
            <Chip
              key={s}
              pressed={view.chosen === s}
              onClick={() => go(withFilter(view, { chosen: s }))}
              count={tally.byChosen[s]}
            >
              {SOURCE_TEXT[s]}
            </Chip>
          ))}
        </div>
      </Row>
      <p className="text-[11px] text-zinc-500">
        Counts are of {view.round === null ? "every round" : `round ${view.round}`}, each dimension on its own; the list
        below applies every filter at once.
      </p>
    </div>
  );
}

export function MarginChart({ margins }: { margins: { margin: number; weight: number }[] }) {
  const bins = marginHistogram(margins);
  const down = margins.filter((m) => m.weight < 1).length;
  const above = margins.filter((m) => m.margin > 0).length;
  return (
    <div data-testid="margin-histogram">
      <h3 className="mb-1 text-xs font-medium text-zinc-500">
        Margin before training, log π(chosen) − log π(rejected) under the policy the pairs were built against (
        {margins.length} pairs)
      </h3>
      <Histogram
        bins={bins.map((b) => ({ lo: b.lo, hi: b.hi, count: b.count, part: b.downweighted }))}
        xLabel="margin (nats)"
        mark={bins.length ? { x: 0, label: "0: no preference" } : undefined}
        partLabel="down-weighted"
      />
      <p className="mt-1 text-[11px] text-zinc-500" data-testid="margin-note">
        {above} of {margins.length} already prefer the chosen answer (margin &gt; 0)
        {down ? `; ${down} down-weighted by the margin filter (dark part of the bars)` : ""}. Pairs the filter dropped
        are not stored, so they are not drawn.
      </p>
    </div>
  );
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));

/** What the pairs stage of each shown round recorded: built, kept, dropped (not stored) and skipped answers. */
export function RoundNotes({ experimentId, round }: { experimentId: string; round: number | null }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.dpo.rounds.queryOptions({ id: experimentId }));
  const rows = (q.data ?? []).filter((r) => r.stats && (round === null || r.round === round));
  if (rows.length === 0) return null;
  return (
    <ul className="space-y-0.5 text-xs text-zinc-600" data-testid="round-notes">
      {rows.map((r) => {
        const s = r.stats;
        if (!s) return null;
        const skipped = Object.entries(r.skipped).filter(([, n]) => n > 0);
        return (
          <li key={r.key}>
            <span className="font-medium text-zinc-800">Round {r.round}</span>
            {r.policy ? ` (rejected answers from ${r.policy})` : ""}: {r.built ?? s.kept + s.dropped} built, {s.kept}{" "}
            kept ({s.downweighted} down-weighted), {s.dropped} dropped by the margin filter
            {s.marginDropped ? ` (their margins ${fmt(s.marginDropped.min)} … ${fmt(s.marginDropped.max)})` : ""}
            {r.tasksWithoutPairs ? `; ${r.tasksWithoutPairs} train tasks without a pair` : ""}
            {skipped.length
              ? `; answers skipped: ${skipped.map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`).join(", ")}`
              : ""}
            .
          </li>
        );
      })}
    </ul>
  );
}
