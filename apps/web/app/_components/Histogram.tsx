"use client";

import { useState } from "react";
import { formatTick, niceTicks, scale } from "../_lib/chart";

export type HistogramBin = {
  lo: number;
  hi: number;
  count: number /** drawn as a darker part of the bar */;
  part?: number;
};

const W = 640;
const M = { top: 16, right: 12, bottom: 30, left: 40 };

/**
 * Bars of equal-width bins on a linear x axis, with an optional vertical mark (e.g. the margin
 * filter's threshold) and the part of each bar that is special (e.g. down-weighted pairs).
 */
export function Histogram({
  bins,
  height = 180,
  xLabel,
  mark,
  partLabel,
}: {
  bins: HistogramBin[];
  height?: number;
  xLabel?: string;
  mark?: { x: number; label: string };
  partLabel?: string;
}) {
  const [hover, setHover] = useState<number | null>(null);
  const first = bins[0];
  const last = bins.at(-1);
  if (!first || !last)
    return <div className="flex h-24 items-center justify-center text-xs text-zinc-400">no data</div>;
  const x0 = Math.min(first.lo, mark?.x ?? first.lo);
  const x1 = Math.max(last.hi, mark?.x ?? last.hi);
  const top = Math.max(1, ...bins.map((b) => b.count));
  const innerH = height - M.top - M.bottom;
  const sx = scale([x0, x1], [M.left, W - M.right]);
  const sy = scale([0, top], [M.top + innerH, M.top]);
  const yTicks = niceTicks(0, top, 3).filter((t) => Number.isInteger(t));
  const shown = hover === null ? null : bins[hover];
  return (
    <div className="relative">
      <svg
        viewBox={`0 0 ${W} ${height}`}
        className="w-full"
        role="img"
        aria-label={`histogram of ${xLabel ?? "values"}`}
      >
        {yTicks.map((t) => (
          <g key={`y${t}`}>
            <line x1={M.left} x2={W - M.right} y1={sy(t)} y2={sy(t)} stroke="#f1f1f4" />
            <text x={M.left - 6} y={sy(t)} dy="0.32em" textAnchor="end" fontSize="10" fill="#71717a">
              {formatTick(t)}
            </text>
          </g>
        ))}
        {bins.map((b, i) => (
          <g
            key={b.lo}
            onMouseEnter={() => setHover(i)}
            onMouseLeave={() => setHover(null)}
            data-testid="histogram-bar"
          >
            <rect
              x={sx(b.lo) + 0.5}
              width={Math.max(1, sx(b.hi) - sx(b.lo) - 1)}
              y={sy(b.count)}
              height={sy(0) - sy(b.count)}
              fill={hover === i ? "#3b82f6" : "#93c5fd"}
            />
            {b.part ? (
              <rect
                x={sx(b.lo) + 0.5}
                width={Math.max(1, sx(b.hi) - sx(b.lo) - 1)}
                y={sy(b.part)}
                height={sy(0) - sy(b.part)}
                fill="#1d4ed8"
              />
            ) : null}
          </g>
        ))}
        <line x1={M.left} x2={W - M.right} y1={sy(0)} y2={sy(0)} stroke="#d4d4d8" />
        {[...bins.map((b) => b.lo), last.hi]
          .filter((_, i, xs) => xs.length <= 12 || i % Math.ceil(xs.length / 12) === 0)
          .map((x) => (
            <text key={`x${x}`} x={sx(x)} y={sy(0) + 14} textAnchor="middle" fontSize="10" fill="#71717a">
              {formatTick(x)}
            </text>
          ))}
        {mark ? (
          <g>
            <line x1={sx(mark.x)} x2={sx(mark.x)} y1={M.top} y2={sy(0)} stroke="#dc2626" strokeDasharray="3 2" />
            {/* the label sits on the side of the line with room for it */}
            <text
              x={sx(mark.x) > W / 2 ? sx(mark.x) - 3 : sx(mark.x) + 3}
              y={M.top + 8}
              textAnchor={sx(mark.x) > W / 2 ? "end" : "start"}
              fontSize="10"
              fill="#dc2626"
            >
              {mark.label}
            </text>
          </g>
        ) : null}
        {xLabel ? (
          <text x={W - M.right} y={height - 2} textAnchor="end" fontSize="10" fill="#a1a1aa">
            {xLabel}
          </text>
        ) : null}
      </svg>
      {shown ? (
        <div className="pointer-events-none absolute right-2 top-1 rounded border border-zinc-200 bg-white/95 px-2 py-1 text-[11px] tabular-nums shadow-sm">
          [{formatTick(shown.lo)}, {formatTick(shown.hi)}): {shown.count}
          {partLabel && shown.part ? ` (${shown.part} ${partLabel})` : ""}
        </div>
      ) : null}
    </div>
  );
}
