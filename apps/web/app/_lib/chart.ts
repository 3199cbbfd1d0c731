// Pure geometry for the SVG line chart, kept apart from React so it can be unit-tested.
export type Point = { x: number; y: number };
export type Domain = [number, number];

/** Round tick values (steps of 1, 2 or 5 × 10^k, the step nearest the requested count, as d3 does) within [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) return [min];
  const [lo, hi] = min < max ? [min, max] : [max, min];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const err = raw / mag;
  const step = mag * (err >= Math.sqrt(50) ? 10 : err >= Math.sqrt(10) ? 5 : err >= Math.SQRT2 ? 2 : 1);
  const first = Math.ceil(lo / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** The extent of the values, padded when flat so a constant series still draws a visible line. */
export function extent(values: number[]): Domain | null {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return null;
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    return [lo - pad, hi + pad];
  }
  return [lo, hi];
}

export function scale(domain: Domain, range: Domain): (v: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  return (v) => (span === 0 ? (r0 + r1) / 2 : r0 + ((v - d0) / span) * (r1 - r0));
}

/** An SVG path through the points in x order; non-finite values break the line into segments. */
export function linePath(points: Point[], sx: (v: number) => number, sy: (v: number) => number): string {
  const sorted = [...points].sort((a, b) => a.x - b.x);
  let d = "";
  let pen = false;
  for (const p of sorted) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) {
      pen = false;
      continue;
    }
    d += `${pen ? "L" : "M"}${sx(p.x).toFixed(2)},${sy(p.y).toFixed(2)}`;
    pen = true;
  }
  return d;
}

/** Compact tick labels: 0.000123 → "1.23e-4", 12000 → "12k", 0.25 → "0.25". */
export function formatTick(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (a < 1e-3) return v.toExponential(2).replace(/\.?0+e/, "e");
  return String(Number(v.toPrecision(3)));
}
