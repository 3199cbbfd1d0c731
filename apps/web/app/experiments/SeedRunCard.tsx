import Link from "next/link";
import type { ReactNode } from "react";
import type { Series } from "../_components/LineChart";
import { ProgressBar } from "../_components/ProgressBar";
import { StateBadge } from "../_components/StatusBadges";

// One seed's run (SFT training, DPO or GRPO) as a card: state, job link, progress and its latest
// figures, one figure by step per seed, and the curves' smoothing control. Shared by the training,
// DPO and GRPO panels so they read the same way.

export const SEED_COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"];
export const seedColor = (i: number): string => SEED_COLORS[i % SEED_COLORS.length] ?? "#2563eb";
/** The raw (unsmoothed) series of a seed: its colour, translucent. */
export const faded = (hex: string) => `${hex}55`;

/** One line per seed of `pick` by step, in the seed's colour; a step where `pick` is null is left out. */
export function seedSeries<P extends { step: number }>(
  runs: readonly { seed: number; points: readonly P[] }[],
  pick: (p: P) => number | null,
): Series[] {
  return runs.map((r, i) => ({
    name: `seed ${r.seed}`,
    color: seedColor(i),
    points: r.points.flatMap((p) => {
      const y = pick(p);
      return y === null ? [] : [{ x: p.step, y }];
    }),
  }));
}

export type SeedFact = { label: string; value: ReactNode; testId?: string };

export function SeedRunCard(props: {
  seed: number;
  state: string;
  jobId: string | null;
  fraction: number | null;
  progressLabel: string;
  /** The latest figures, shown once the run reported a step. */
  facts: SeedFact[] | null;
}) {
  return (
    <div className="rounded-md border border-zinc-200 p-3 text-xs">
      <div className="mb-1 flex items-center justify-between">
        <span className="font-medium">seed {props.seed}</span>
        <span className="flex items-center gap-2">
          <StateBadge state={props.state} />
          {props.jobId ? (
            <Link className="font-mono underline" href={`/jobs/${props.jobId}`}>
              job
            </Link>
          ) : null}
        </span>
      </div>
      <ProgressBar value={props.fraction} label={props.progressLabel} />
      {props.facts ? (
        <dl className="mt-2 grid grid-cols-2 gap-x-3 gap-y-0.5 tabular-nums text-zinc-600">
          {props.facts.map((f) => [
            <dt key={`${f.label}-t`}>{f.label}</dt>,
            <dd key={`${f.label}-d`} className="text-right text-zinc-900" data-testid={f.testId}>
              {f.value}
            </dd>,
          ])}
        </dl>
      ) : null}
    </div>
  );
}

/** The curves' smoothing weight (an exponential moving average), shown with its value. */
export function SmoothingSlider(props: { weight: number; onChange: (w: number) => void; label: string }) {
  return (
    <label className="flex items-center gap-2 text-xs text-zinc-600">
      smoothing
      <input
        type="range"
        min={0}
        max={0.99}
        step={0.01}
        value={props.weight}
        onChange={(e) => props.onChange(Number(e.target.value))}
        aria-label={props.label}
      />
      <span className="w-8 tabular-nums">{props.weight.toFixed(2)}</span>
    </label>
  );
}
