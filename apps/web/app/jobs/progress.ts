// Reading the free-form progress objects that jobs report (shell jobs, the trainer, the evaluator).
export type ProgressData = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A completion fraction in [0, 1] if the progress says how far along it is, else null. */
export function progressFraction(p: ProgressData | null | undefined): number | null {
  if (!p) return null;
  const direct = num(p.fraction) ?? num(p.progress);
  if (direct !== null && direct >= 0 && direct <= 1) return direct;
  const pairs: [string, string][] = [
    ["step", "total_steps"],
    ["step", "total"],
    ["done", "total"],
    ["current", "total"],
    ["completed", "total"],
    ["epoch", "epochs"],
  ];
  for (const [a, b] of pairs) {
    const x = num(p[a]);
    const t = num(p[b]);
    if (x !== null && t !== null && t > 0) return Math.min(1, Math.max(0, x / t));
  }
  return null;
}

const X_KEYS = ["step", "global_step", "epoch"];
const isMetricKey = (k: string) => /loss|pass|acc|score|reward|perplexity/i.test(k);

export type MetricSeries = { name: string; points: { x: number; y: number }[] };

/**
 * Numeric metrics over the progress history, keyed by the first step-like field present:
 * the loss curve of a training job, dev pass@1 per epoch, and so on.
 */
export function metricSeries(history: { seq: number; data: ProgressData }[]): { xKey: string; series: MetricSeries[] } {
  const xKey = X_KEYS.find((k) => history.some((h) => num(h.data[k]) !== null)) ?? "seq";
  const byName = new Map<string, { x: number; y: number }[]>();
  for (const h of history) {
    const x = xKey === "seq" ? h.seq : num(h.data[xKey]);
    if (x === null) continue;
    for (const [k, v] of Object.entries(h.data)) {
      const y = num(v);
      if (y === null || !isMetricKey(k)) continue;
      const pts = byName.get(k) ?? [];
      pts.push({ x, y });
      byName.set(k, pts);
    }
  }
  return { xKey, series: [...byName].map(([name, points]) => ({ name, points })) };
}
