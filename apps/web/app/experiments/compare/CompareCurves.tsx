"use client";

import { LineChart, type Series } from "../../_components/LineChart";
import { Section } from "../../_components/PageHeader";

type Curve = {
  experimentId: string;
  name: string;
  devCurve: { base: number; points: { seed: number; epoch: number; pass1: number }[] } | null;
};

/** The runs' dev pass@1 per epoch on one chart: one line per run and seed, each run's base dashed. */
export function CompareCurves({ curves }: { curves: Curve[] }) {
  const series: Series[] = curves.flatMap((c) => {
    if (!c.devCurve) return [];
    const curve = c.devCurve;
    const seeds = [...new Set(curve.points.map((p) => p.seed))].sort((a, b) => a - b);
    const epochs = curve.points.map((p) => p.epoch);
    const lines: Series[] = seeds.map((seed) => ({
      name: seeds.length > 1 ? `${c.name} · seed ${seed}` : c.name,
      points: curve.points
        .filter((p) => p.seed === seed)
        .sort((a, b) => a.epoch - b.epoch)
        .map((p) => ({ x: p.epoch, y: p.pass1 })),
    }));
    const span = epochs.length ? [Math.min(...epochs), Math.max(...epochs)] : [];
    return [...lines, { name: `${c.name} · base`, dashed: true, points: span.map((x) => ({ x, y: curve.base })) }];
  });
  return (
    <Section title="Dev pass@1 per epoch">
      {series.length === 0 ? (
        <p className="text-sm text-zinc-500">No run has a dev curve yet.</p>
      ) : (
        <div data-testid="compare-curves">
          <LineChart series={series} xLabel="epoch" yLabel="dev pass@1" yDomain={[0, 1]} integerX />
        </div>
      )}
    </Section>
  );
}
