"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorBox } from "../_components/ErrorBox";
import { LineChart, type Marker, type Series } from "../_components/LineChart";
import { Section } from "../_components/PageHeader";
import { duration } from "../../client/format";
import { useTRPC } from "../_lib/trpc";
import { SeedRunCard, seedSeries } from "./SeedRunCard";

// The GRPO half of an sft+grpo experiment: each seed's run as curves from the grpo job's streamed
// steps (reward and the judge's pass share; groups whose rewards were all equal, which carry no
// signal; KL when β > 0; completion length) with its snapshots marked, each one a dev candidate.
// Suspicious completions (tampered, timeouts, limits, unparseable) are counted, as reward hacking
// would first show there. With dynamic sampling: the pass-rate filter's counts (train tasks
// measured under the start, all pass, all fail, kept as prompts) and, per seed, the groups dropped
// from the loss or resampled for equal rewards.

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function GrpoPanel({ experimentId, live }: { experimentId: string; live: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.grpo.curves.queryOptions({ id: experimentId }, { refetchInterval: live ? 3_000 : false }));
  const filter = useQuery(
    trpc.grpo.promptFilter.queryOptions({ id: experimentId }, { refetchInterval: live ? 3_000 : false }),
  );
  if (q.error) return <ErrorBox error={q.error} title="Could not load the GRPO curves" />;
  // Until the steps are read, say so: "no step reported yet" would be a claim about the run.
  if (!q.data)
    return (
      <Section title="GRPO (online RL, the judge's verdicts as reward)">
        <p className="text-sm text-zinc-500">Loading the GRPO steps…</p>
      </Section>
    );
  const runs = q.data;
  const started = runs.filter((r) => r.points.length > 0);
  const markers: Marker[] = [
    ...new Map(
      started.flatMap((r) => r.snapshots).map((s) => [s.step, { x: s.step, label: `snapshot ${s.snapshot}` }]),
    ).values(),
  ];
  const kl = seedSeries(started, (p) => p.kl).filter((s) => s.points.length > 0);
  const chart = (testId: string, title: string, series: Series[], yLabel: string, yDomain?: [number, number]) => (
    <div data-testid={testId} className="max-w-3xl">
      <h3 className="mb-1 text-xs font-medium text-zinc-500">{title}</h3>
      <LineChart
        series={series}
        markers={markers}
        integerX
        xLabel="step"
        yLabel={yLabel}
        yDomain={yDomain}
        height={200}
      />
    </div>
  );
  return (
    <Section title="GRPO (online RL, the judge's verdicts as reward)">
      <div data-testid="grpo-panel">
        {filter.data ? <PromptFilterLine f={filter.data} /> : null}
        <div className="mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
          {runs.map((r) => {
            const l = r.latest;
            const suspicious = r.points.reduce((a, p) => a + p.suspicious, 0);
            const dropped = sumReported(r.points.map((p) => p.droppedGroups));
            const resampled = sumReported(r.points.map((p) => p.resampledGroups));
            return (
              <SeedRunCard
                key={r.key}
                seed={r.seed}
                state={r.jobState ?? r.stageState}
                jobId={r.jobId}
                fraction={r.fraction}
                progressLabel={l ? `step ${l.step}/${l.totalSteps}` : "waits for its start policy"}
                facts={
                  l
                    ? [
                        { label: "reward mean", value: l.rewardMean.toFixed(3) },
                        { label: "pass share", value: pct(l.passShare) },
                        { label: "groups without signal", value: pct(l.zeroVarianceShare) },
                        ...(dropped !== null
                          ? [
                              {
                                label: "equal-reward groups dropped",
                                value: String(dropped),
                                testId: `grpo-dropped-${r.seed}`,
                              },
                            ]
                          : []),
                        ...(resampled !== null ? [{ label: "groups resampled", value: String(resampled) }] : []),
                        {
                          label: "suspicious completions",
                          value: String(suspicious),
                          testId: `grpo-suspicious-${r.seed}`,
                        },
                        {
                          label: r.etaS !== null ? "ETA" : "snapshots",
                          value: r.etaS !== null ? duration(r.etaS * 1000) : String(r.snapshots.length),
                        },
                      ]
                    : null
                }
              />
            );
          })}
        </div>
        {started.length === 0 ? (
          <p className="text-sm text-zinc-500">
            No GRPO step reported yet: the curves appear with the trainer&apos;s first step.
          </p>
        ) : (
          <div className="grid gap-4 lg:grid-cols-2">
            {chart(
              "grpo-reward-chart",
              "Reward mean by step (1 = the judge passed)",
              seedSeries(started, (p) => p.rewardMean),
              "reward",
              [0, 1],
            )}
            {chart(
              "grpo-signal-chart",
              "Groups whose rewards were all equal (no learning signal)",
              seedSeries(started, (p) => p.zeroVarianceShare),
              "share",
              [0, 1],
            )}
            {chart(
              "grpo-length-chart",
              "Completion length (tokens)",
              seedSeries(started, (p) => p.completionLength),
              "tokens",
            )}
            {kl.length ? chart("grpo-kl-chart", "KL to the start policy", kl, "KL") : null}
          </div>
        )}
      </div>
    </Section>
  );
}

/** A run's total of a count its steps may not report (null: no step reported it). */
function sumReported(xs: readonly (number | null)[]): number | null {
  const got = xs.filter((x): x is number => x !== null);
  return got.length ? got.reduce((a, b) => a + b, 0) : null;
}

type FilterData = {
  state: string;
  startLabel: string | null;
  counts: {
    measured: number;
    allPass: number;
    allFail: number;
    kept: number;
    unmeasured: number;
    samples: number;
  } | null;
};

/** The pass-rate filter: which train tasks became RL prompts (0 < pass rate < 1 under the start). */
function PromptFilterLine({ f }: { f: FilterData }) {
  const c = f.counts;
  return (
    <p data-testid="grpo-prompt-filter" className="mb-3 text-sm text-zinc-600">
      {c
        ? `Pass-rate filter (${f.startLabel ?? "start"}, n = ${c.samples}): ${c.measured} train tasks measured, ` +
          `${c.allPass} all pass, ${c.allFail} all fail, ${c.kept} kept as prompts` +
          (c.unmeasured ? `, ${c.unmeasured} without a verdict` : "")
        : `Pass-rate filter: the start's train answers are being sampled and graded (${f.state}).`}
    </p>
  );
}
