"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { smooth } from "@agentlab/core/experiments/training";
import { ErrorBox } from "../_components/ErrorBox";
import { LineChart, type Marker, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { duration } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import { faded, SeedRunCard, seedColor, seedSeries, SmoothingSlider } from "./SeedRunCard";

/** Per-seed training: loss (raw and smoothed) with epoch marks and per-epoch eval loss, learning rate, tokens/s, ETA. */
export function TrainingPanel({ experimentId, live }: { experimentId: string; live: boolean }) {
  const trpc = useTRPC();
  const [weight, setWeight] = useState(0.6);
  const q = useQuery(trpc.runs.training.queryOptions({ id: experimentId }, { refetchInterval: live ? 3_000 : false }));
  if (q.error) return <ErrorBox error={q.error} title="Could not load the training curves" />;
  const seeds = q.data ?? [];
  const started = seeds.filter((s) => s.points.length > 0);

  const loss: Series[] = started.flatMap((s, i) => {
    const color = seedColor(i);
    const ys = smooth(
      s.points.map((p) => p.loss),
      weight,
    );
    const evals = s.epochs.filter((e) => e.evalLoss !== null).map((e) => ({ x: e.step, y: e.evalLoss ?? Number.NaN }));
    return [
      { name: `seed ${s.seed} raw`, color: faded(color), points: s.points.map((p) => ({ x: p.step, y: p.loss })) },
      { name: `seed ${s.seed} smoothed`, color, points: s.points.map((p, k) => ({ x: p.step, y: ys[k] ?? p.loss })) },
      ...(evals.length ? [{ name: `seed ${s.seed} eval loss`, color, dashed: true, points: evals }] : []),
    ];
  });
  const markers: Marker[] = [
    ...new Map(
      started.flatMap((s) => s.marks).map((m) => [`epoch ${m.epoch}`, { x: m.step, label: `epoch ${m.epoch}` }]),
    ).values(),
    // A lost run retried: where the next attempt took over, resumed after an epoch or from step 0.
    ...started.flatMap((s) =>
      s.restarts.map((r) => ({
        x: r.step,
        label: `seed ${s.seed} attempt ${r.attempt}: ${r.resumed ? `resumed at step ${r.step}` : "restarted from step 0"}`,
      })),
    ),
  ];
  const hasEval = seeds.some((s) => s.epochs.some((e) => e.evalLoss !== null));

  return (
    <Section title="Training" actions={<SmoothingSlider weight={weight} onChange={setWeight} label="smoothing" />}>
      <div className="mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-3" data-testid="seed-progress">
        {seeds.map((s) => (
          <SeedRunCard
            key={s.key}
            seed={s.seed}
            state={s.jobState ?? s.stageState}
            jobId={s.jobId}
            fraction={s.fraction}
            progressLabel={
              s.latest
                ? `step ${s.latest.step}/${s.latest.totalSteps} · epoch ${s.latest.epoch}`
                : s.stageState === "pending"
                  ? "waits for the dataset"
                  : "starting"
            }
            facts={
              s.latest
                ? [
                    { label: "loss", value: s.latest.loss.toFixed(4) },
                    { label: "learning rate", value: s.latest.lr.toExponential(2) },
                    { label: "tokens/s", value: Math.round(s.latest.tokensPerS).toLocaleString("en-US") },
                    {
                      label: s.etaS !== null ? "ETA" : "duration",
                      testId: `eta-${s.seed}`,
                      value:
                        s.etaS !== null
                          ? duration(s.etaS * 1000)
                          : duration(
                              s.startedAt && s.finishedAt
                                ? new Date(s.finishedAt).getTime() - new Date(s.startedAt).getTime()
                                : null,
                            ),
                    },
                  ]
                : null
            }
          />
        ))}
      </div>
      {started.length === 0 ? (
        <p className="text-sm text-zinc-500">
          No training step reported yet: the curves appear with the trainer&apos;s first progress event.
        </p>
      ) : (
        <div className="grid gap-4 lg:grid-cols-2">
          <div className="max-w-3xl lg:col-span-2">
            <h3 className="mb-1 text-xs font-medium text-zinc-500">
              Loss by step
              {hasEval ? " (dashed: eval loss at each epoch end)" : " (no eval split: eval loss not computed)"}
            </h3>
            <LineChart series={loss} markers={markers} xLabel="step" yLabel="loss" height={260} />
          </div>
          <div>
            <h3 className="mb-1 text-xs font-medium text-zinc-500">Learning rate</h3>
            <LineChart
              series={seedSeries(started, (p) => p.lr)}
              markers={markers}
              xLabel="step"
              yLabel="lr"
              height={170}
            />
          </div>
          <div>
            <h3 className="mb-1 text-xs font-medium text-zinc-500">Supervised tokens per second</h3>
            <LineChart series={seedSeries(started, (p) => p.tokensPerS)} xLabel="step" yLabel="tokens/s" height={170} />
          </div>
        </div>
      )}
    </Section>
  );
}
