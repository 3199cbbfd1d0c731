"use client";

import Link from "next/link";
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { smooth } from "@agentlab/core/experiments/training";
import { ErrorBox } from "../_components/ErrorBox";
import { LineChart, type Marker, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { duration } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import { defaultDpoRound, dpoRoundsShown, type DpoRun } from "../_lib/dpo-curves";
import { faded, SeedRunCard, seedColor, seedSeries, SmoothingSlider } from "./SeedRunCard";
import { HeldOutScores } from "./DpoHeldOut";

// The DPO half of an sft+dpo experiment: per round, what the pairs stage built and kept,
// and each seed's DPO run as curves (loss, reward margin, preference accuracy by step), drawn with
// the training panel's chart from the dpo job's streamed progress.

function RoundPairs({ experimentId, round }: { experimentId: string; round: number }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.dpo.rounds.queryOptions({ id: experimentId }));
  const r = q.data?.find((x) => x.round === round);
  if (!r) return null;
  const s = r.stats;
  const skipped = Object.entries(r.skipped).filter(([, n]) => n > 0);
  return (
    <p className="mb-3 text-xs text-zinc-600" data-testid={`dpo-round-${round}-pairs`}>
      Pairs of round {round}
      {r.policy ? ` (rejected answers sampled from ${r.policy})` : ""}:{" "}
      {s ? (
        <>
          {r.built ?? s.kept + s.dropped} built, <strong>{s.kept} kept</strong> of {s.tasks} tasks, {s.dropped} dropped
          and {s.downweighted} down-weighted by the margin filter
        </>
      ) : (
        <>not built yet ({r.state})</>
      )}
      {skipped.length ? `; answers skipped: ${skipped.map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`).join(", ")}` : ""}
      .{" "}
      <Link className="text-blue-700 underline" href={`/experiments/${experimentId}/pairs?round=${round}`}>
        browse the pairs
      </Link>
    </p>
  );
}

function SeedCard({ run }: { run: DpoRun }) {
  const l = run.latest;
  return (
    <SeedRunCard
      seed={run.seed}
      state={run.jobState ?? run.stageState}
      jobId={run.jobId}
      fraction={run.fraction}
      progressLabel={l ? `step ${l.step}/${l.totalSteps} · epoch ${l.epoch}` : "waits for pairs"}
      facts={
        l
          ? [
              { label: "loss", value: l.loss.toFixed(4) },
              { label: "reward margin", value: l.rewardMargin.toFixed(4) },
              { label: "preference accuracy", value: `${(l.preferenceAccuracy * 100).toFixed(1)}%` },
              {
                label: run.etaS !== null ? "ETA" : "tokens/s",
                value: run.etaS !== null ? duration(run.etaS * 1000) : Math.round(l.tokensPerS).toLocaleString("en-US"),
              },
            ]
          : null
      }
    />
  );
}

/**
 * Each epoch's Δ log-prob of the chosen and rejected answers on the train pairs: DPO can grow the
 * margin by pushing both down (the chosen one less), which the margin chart alone does not show.
 */
function LogpDynamics({ runs, markers }: { runs: DpoRun[]; markers: Marker[] }) {
  const measured = runs.filter((r) => r.dynamics.length > 0);
  if (measured.length === 0) return null;
  const series: Series[] = measured.flatMap((r, i) => [
    {
      name: `seed ${r.seed} chosen`,
      color: seedColor(i),
      points: r.dynamics.map((d) => ({ x: d.step, y: d.chosen })),
    },
    {
      name: `seed ${r.seed} rejected`,
      color: faded(seedColor(i)),
      points: r.dynamics.map((d) => ({ x: d.step, y: d.rejected })),
    },
  ]);
  const warnings = measured.flatMap((r) =>
    r.dynamics.flatMap((d) => (d.warning ? [`seed ${r.seed}, epoch ${d.epoch}: ${d.warning}`] : [])),
  );
  return (
    <div data-testid="dpo-logp-chart" className="lg:col-span-2 max-w-3xl">
      <h3 className="mb-1 text-xs font-medium text-zinc-500">
        Δ log-prob vs the reference on the train pairs, per epoch (nats per answer; chosen solid, rejected faded)
      </h3>
      <LineChart
        series={series}
        markers={markers}
        refLines={[{ y: 0, label: "0" }]}
        xLabel="step"
        yLabel="Δ log-prob"
        height={180}
      />
      {warnings.length ? (
        <ul className="mt-1 text-xs text-amber-700" data-testid="dpo-logp-warning">
          {warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** `rft`: the sft+rft control, which trains the SFT term alone; its DPO figures are measured, not optimized. */
export function DpoPanel({ experimentId, live, rft = false }: { experimentId: string; live: boolean; rft?: boolean }) {
  const trpc = useTRPC();
  const [weight, setWeight] = useState(0.6);
  const [picked, setPicked] = useState<number | null>(null);
  const q = useQuery(trpc.dpo.curves.queryOptions({ id: experimentId }, { refetchInterval: live ? 3_000 : false }));
  if (q.error) return <ErrorBox error={q.error} title="Could not load the DPO curves" />;
  const runs = q.data ?? [];
  const rounds = dpoRoundsShown(runs);
  const round = picked ?? defaultDpoRound(rounds);
  const shown = runs.filter((r) => r.round === round);
  const started = shown.filter((r) => r.points.length > 0);
  const color = seedColor;
  const loss: Series[] = started.flatMap((r, i) => {
    const ys = smooth(
      r.points.map((p) => p.loss),
      weight,
    );
    return [
      { name: `seed ${r.seed} raw`, color: faded(color(i)), points: r.points.map((p) => ({ x: p.step, y: p.loss })) },
      {
        name: `seed ${r.seed} smoothed`,
        color: color(i),
        points: r.points.map((p, k) => ({ x: p.step, y: ys[k] ?? p.loss })),
      },
    ];
  });
  const markers: Marker[] = [
    ...new Map(
      started.flatMap((r) => r.marks).map((m) => [`epoch ${m.epoch}`, { x: m.step, label: `epoch ${m.epoch}` }]),
    ).values(),
  ];

  return (
    <Section
      title={rft ? "RFT control (trains the SFT term alone; the DPO figures are measured, not optimized)" : "DPO"}
      actions={
        <div className="flex items-center gap-3">
          {rounds.length > 1 ? (
            <div role="tablist" aria-label="DPO round" className="flex gap-1">
              {rounds.map((r) => (
                <button
                  key={r.round}
                  role="tab"
                  aria-selected={r.round === round}
                  onClick={() => setPicked(r.round)}
                  className={`rounded border px-2 py-0.5 text-xs ${r.round === round ? "border-zinc-800 bg-zinc-800 text-white" : "border-zinc-300 bg-white"}`}
                >
                  round {r.round}
                </button>
              ))}
            </div>
          ) : null}
          <SmoothingSlider weight={weight} onChange={setWeight} label="DPO loss smoothing" />
        </div>
      }
    >
      <div data-testid="dpo-panel">
        <RoundPairs experimentId={experimentId} round={round} />
        <div className="mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
          {shown.map((r) => (
            <SeedCard key={r.key} run={r} />
          ))}
        </div>
        <HeldOutScores runs={shown} />
        {started.length === 0 ? (
          <p className="text-sm text-zinc-500">
            No DPO step reported yet for round {round}: the curves appear with the trainer&apos;s first progress event.
          </p>
        ) : (
          <div className="grid gap-4 lg:grid-cols-2">
            <div className="max-w-3xl lg:col-span-2">
              <h3 className="mb-1 text-xs font-medium text-zinc-500">DPO loss by step (log 2 ≈ 0.693 at the start)</h3>
              <LineChart series={loss} markers={markers} xLabel="step" yLabel="loss" height={240} />
            </div>
            <div data-testid="dpo-margin-chart">
              <h3 className="mb-1 text-xs font-medium text-zinc-500">Reward margin β·(Δ chosen − Δ rejected)</h3>
              <LineChart
                series={seedSeries(started, (p) => p.rewardMargin)}
                markers={markers}
                refLines={[{ y: 0, label: "0" }]}
                xLabel="step"
                yLabel="margin"
                height={180}
              />
            </div>
            <LogpDynamics runs={started} markers={markers} />
            <div data-testid="dpo-accuracy-chart">
              <h3 className="mb-1 text-xs font-medium text-zinc-500">
                Preference accuracy (chosen reward &gt; rejected)
              </h3>
              <LineChart
                series={seedSeries(started, (p) => p.preferenceAccuracy)}
                markers={markers}
                xLabel="step"
                yLabel="accuracy"
                yDomain={[0, 1]}
                height={180}
              />
            </div>
          </div>
        )}
      </div>
    </Section>
  );
}
