"use client";

import { useMemo, useState, type MouseEvent } from "react";
import { extent, formatTick, linePath, niceTicks, scale, type Point } from "../_lib/chart";

export type Series = { name: string; points: Point[]; color?: string; dashed?: boolean };
export type Marker = { x: number; label: string };
export type RefLine = { y: number; label: string };

const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];
const W = 640;
// The top margin holds the y label above the highest tick, so the two never overlap.
const M = { top: 24, right: 16, bottom: 30, left: 48 };

/**
 * A small SVG line chart for loss and dev curves: several series, optional vertical markers
 * (e.g. the selected epoch) and horizontal reference lines (e.g. the base model's score).
 */
export function LineChart({
  series,
  height = 220,
  xLabel,
  yLabel,
  markers = [],
  refLines = [],
  yDomain,
  integerX = false,
}: {
  series: Series[];
  height?: number;
  xLabel?: string;
  yLabel?: string;
  markers?: Marker[];
  refLines?: RefLine[];
  yDomain?: [number, number];
  /** Only whole-number x ticks (epochs): a 1–2 epoch axis is not labelled 1.2, 1.4, … */
  integerX?: boolean;
}) {
  const [hoverX, setHoverX] = useState<number | null>(null);
  const geo = useMemo(() => {
    const xs = series.flatMap((s) => s.points.map((p) => p.x)).concat(markers.map((m) => m.x));
    const ys = series.flatMap((s) => s.points.map((p) => p.y)).concat(refLines.map((r) => r.y));
    const xd = extent(xs);
    const yd = yDomain ?? extent(ys);
    if (!xd || !yd) return null;
    const innerW = W - M.left - M.right;
    const innerH = height - M.top - M.bottom;
    const sx = scale(xd, [M.left, M.left + innerW]);
    const sy = scale(yd, [M.top + innerH, M.top]);
    const allX = [...new Set(xs.filter(Number.isFinite))].sort((a, b) => a - b);
    return {
      xd,
      yd,
      sx,
      sy,
      innerW,
      innerH,
      allX,
      xTicks: niceTicks(xd[0], xd[1], 6).filter((t) => !integerX || Number.isInteger(t)),
      yTicks: niceTicks(yd[0], yd[1], 4),
    };
  }, [series, markers, refLines, yDomain, height, integerX]);

  if (!geo) return <div className="flex h-24 items-center justify-center text-xs text-zinc-400">no data yet</div>;
  const { sx, sy, xTicks, yTicks, innerH, allX } = geo;
  const colorOf = (s: Series, i: number) => s.color ?? PALETTE[i % PALETTE.length];

  const onMove = (e: MouseEvent<SVGSVGElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const px = ((e.clientX - rect.left) / rect.width) * W;
    let best: number | null = null;
    for (const x of allX) if (best === null || Math.abs(sx(x) - px) < Math.abs(sx(best) - px)) best = x;
    setHoverX(best);
  };
  const hoverRows =
    hoverX === null
      ? []
      : series.map((s, i) => ({ name: s.name, color: colorOf(s, i), y: s.points.find((p) => p.x === hoverX)?.y }));

  return (
    <div className="relative">
      <svg
        viewBox={`0 0 ${W} ${height}`}
        className="w-full"
        role="img"
        aria-label={yLabel ? `${yLabel} by ${xLabel ?? "x"}` : "line chart"}
        onMouseMove={onMove}
        onMouseLeave={() => setHoverX(null)}
      >
        {yTicks.map((t) => (
          <g key={`y${t}`}>
            <line x1={M.left} x2={W - M.right} y1={sy(t)} y2={sy(t)} stroke="#f1f1f4" />
            <text x={M.left - 6} y={sy(t)} dy="0.32em" textAnchor="end" fontSize="10" fill="#71717a">
              {formatTick(t)}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={`x${t}`} x={sx(t)} y={M.top + innerH + 14} textAnchor="middle" fontSize="10" fill="#71717a">
            {formatTick(t)}
          </text>
        ))}
        <line x1={M.left} x2={W - M.right} y1={M.top + innerH} y2={M.top + innerH} stroke="#d4d4d8" />
        {xLabel ? (
          <text x={W - M.right} y={height - 2} textAnchor="end" fontSize="10" fill="#a1a1aa">
            {xLabel}
          </text>
        ) : null}
        {yLabel ? (
          <text x={4} y={M.top - 12} fontSize="10" fill="#a1a1aa">
            {yLabel}
          </text>
        ) : null}
        {refLines.map((r) => (
          <g key={`r${r.label}`}>
            <line x1={M.left} x2={W - M.right} y1={sy(r.y)} y2={sy(r.y)} stroke="#a1a1aa" strokeDasharray="4 3" />
            <text x={W - M.right} y={sy(r.y) - 3} textAnchor="end" fontSize="10" fill="#71717a">
              {r.label}
            </text>
          </g>
        ))}
        {markers.map((m) => (
          <g key={`m${m.label}`}>
            <line x1={sx(m.x)} x2={sx(m.x)} y1={M.top} y2={M.top + innerH} stroke="#059669" strokeDasharray="2 2" />
            {/* A mark in the right half labels to its left, so the last one is not cut off at the edge. */}
            <text
              x={sx(m.x) > W / 2 ? sx(m.x) - 3 : sx(m.x) + 3}
              textAnchor={sx(m.x) > W / 2 ? "end" : "start"}
              y={M.top + 8}
              fontSize="10"
              fill="#059669"
            >
              {m.label}
            </text>
          </g>
        ))}
        {series.map((s, i) => (
          <g key={s.name}>
            <path
              d={linePath(s.points, sx, sy)}
              fill="none"
              stroke={colorOf(s, i)}
              strokeWidth="1.75"
              strokeDasharray={s.dashed ? "5 3" : undefined}
              strokeLinejoin="round"
            />
            {s.points.length <= 40
              ? s.points
                  .filter((p) => Number.isFinite(p.y))
                  .map((p) => <circle key={p.x} cx={sx(p.x)} cy={sy(p.y)} r="2.25" fill={colorOf(s, i)} />)
              : null}
          </g>
        ))}
        {hoverX !== null ? (
          <line x1={sx(hoverX)} x2={sx(hoverX)} y1={M.top} y2={M.top + innerH} stroke="#a1a1aa" />
        ) : null}
      </svg>
      {series.length > 1 ? (
        <div className="mt-1 flex flex-wrap gap-3 text-[11px] text-zinc-600">
          {series.map((s, i) => (
            <span key={s.name} className="inline-flex items-center gap-1">
              <span className="inline-block h-0.5 w-3" style={{ background: colorOf(s, i) }} />
              {s.name}
            </span>
          ))}
        </div>
      ) : null}
      {hoverX !== null ? (
        <div className="pointer-events-none absolute right-2 top-1 rounded border border-zinc-200 bg-white/95 px-2 py-1 text-[11px] shadow-sm">
          <div className="font-medium text-zinc-700">
            {xLabel ?? "x"} {formatTick(hoverX)}
          </div>
          {hoverRows.map((r) => (
            <div key={r.name} className="flex items-center gap-1.5 tabular-nums">
              <span className="size-1.5 rounded-full" style={{ background: r.color }} />
              <span className="text-zinc-500">{r.name}</span>
              <span className="ml-auto pl-2 text-zinc-800">{r.y === undefined ? "—" : formatTick(r.y)}</span>
            </div>
          ))}
        </div>
      ) : null}
    </div>
  );
}
