"use client";

import { LineChart, type Series } from "./LineChart";
import { Section } from "./PageHeader";

type Curve = {
  name: string;
  devCurve: { base: number; points: { seed: number; epoch: number; pass1: number }[] } | null;
};

/**
 * Several runs' dev pass@1 per epoch on one chart (runs compared, a study's arms): one line per run
 * and seed, each run's base dashed. `what` names the runs in the empty state ("run", "arm").
 */
export function DevCurves({ curves, what, testId }: { curves: Curve[]; what: string; testId: string }) {
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
        <p className="px-4 py-3 text-sm text-zinc-500">
          No {what} has a dev curve yet (it appears with its dev selection).
        </p>
      ) : (
        <div data-testid={testId} className="max-w-3xl">
          <LineChart series={series} xLabel="epoch" yLabel="dev pass@1" yDomain={[0, 1]} integerX />
        </div>
      )}
    </Section>
  );
}
