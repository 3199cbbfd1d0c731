"use client";

import type { SampleVerdict } from "@agentlab/core";

// A task's n answers at a glance: the pass count and one mark per sample, in sample
// order, each titled with its verdict and seed. With `onPick` the marks choose the sample shown.

export function SampleVerdicts({
  samples,
  picked,
  onPick,
}: {
  samples: readonly SampleVerdict[] | undefined;
  picked?: number;
  onPick?: (index: number) => void;
}) {
  if (!samples || samples.length === 0) return <span className="text-xs text-zinc-500">no verdict</span>;
  const passes = samples.filter((s) => s.verdict === "pass").length;
  return (
    <span className="inline-flex items-center gap-1" data-testid="sample-verdicts">
      <span className="tabular-nums text-xs">
        {passes}/{samples.length}
      </span>
      {samples.map((s) => {
        const title = `sample ${s.index}: ${s.verdict}${s.seed === null ? "" : ` (seed ${s.seed})`}`;
        const colour = s.verdict === "pass" ? "bg-emerald-500" : "bg-red-400";
        const ring = picked === s.index ? "ring-2 ring-zinc-800" : "";
        return onPick ? (
          <button
            key={s.index}
            type="button"
            title={title}
            aria-label={title}
            aria-pressed={picked === s.index}
            onClick={() => onPick(s.index)}
            className={`h-3 w-3 rounded-sm ${colour} ${ring}`}
          />
        ) : (
          <span key={s.index} title={title} className={`inline-block h-2.5 w-2.5 rounded-sm ${colour}`} />
        );
      })}
    </span>
  );
}
