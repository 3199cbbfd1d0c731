/** A thin determinate bar; `value` is a fraction in [0, 1] (clamped); null draws an indeterminate stripe. */
export function ProgressBar({
  value,
  label,
  className = "",
}: {
  value: number | null;
  label?: string;
  className?: string;
}) {
  const pct = value === null || !Number.isFinite(value) ? null : Math.min(100, Math.max(0, value * 100));
  return (
    <div className={className}>
      {label ? (
        <div className="mb-1 flex justify-between text-xs text-zinc-500">
          <span>{label}</span>
          {pct !== null ? <span className="tabular-nums">{pct.toFixed(pct < 10 ? 1 : 0)}%</span> : null}
        </div>
      ) : null}
      <div
        className="h-1.5 w-full overflow-hidden rounded-full bg-zinc-100"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct ?? undefined}
        aria-label={label}
      >
        {pct === null ? (
          <div className="h-full w-1/3 animate-pulse rounded-full bg-blue-300" />
        ) : (
          <div
            className="h-full rounded-full bg-blue-500 transition-[width] duration-500"
            style={{ width: `${pct}%` }}
          />
        )}
      </div>
    </div>
  );
}
