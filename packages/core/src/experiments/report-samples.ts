import { passAtKRows, REPORTED_KS, type PassAtK, type SampleCount } from "../stats/passk";
import {
  rateChangeHistogram,
  SAMPLES_MDE_METHOD,
  samplesMde,
  type HistogramBin,
  type SamplesMde,
} from "../stats/rates";
import type { ExperimentConfig } from "./config";

// Multi-sample evaluation in the report. With n answers per task a task's outcome is
// its pass rate, the paired quantity of every comparison (the clustered test and interval are
// unchanged: comparePaired takes rates); pass@1 is the mean over samples, pass@k unbiased. A
// one-answer evaluation (n = 1) carries no samples and reads exactly as before.

/** One graded answer of a task. seed: what it was sampled with (null: greedy). */
export type SampleVerdict = { index: number; seed: number | null; verdict: string };

/** What buildReport needs of a task's outcome; `samples` only for a multi-sample evaluation. */
export type ScoredOutcome = { verdict: string; samples?: readonly SampleVerdict[] };

export const passed = (v: string) => (v === "pass" ? 1 : 0);

/** The task's samples as counts (one sample when `samples` is absent). */
export function sampleCount(o: ScoredOutcome): SampleCount {
  const xs = o.samples;
  if (!xs || xs.length === 0) return { samples: 1, correct: passed(o.verdict) };
  return { samples: xs.length, correct: xs.reduce((s, x) => s + passed(x.verdict), 0) };
}

/** 0/1 for one answer, the pass rate c/n for n: the paired outcome of the task. */
export const outcomeScore = (o: ScoredOutcome): number => {
  const c = sampleCount(o);
  return c.correct / c.samples;
};

/** A stored verdict row (one per task and sample) as the report stage reads it. */
export type VerdictRow = {
  modelKey: string;
  taskId: string;
  group: string;
  /** The task's declared cluster (the unit of dependence), when it has one. */
  cluster?: string;
  sampleIndex: number;
  seed: number | null;
  verdict: string;
  isolation: "judge" | "in_process";
};

type GroupedVerdict = {
  taskId: string;
  group: string;
  cluster?: string;
  verdict: string;
  isolation: VerdictRow["isolation"];
  samples?: SampleVerdict[];
};

/**
 * Verdict rows grouped into one outcome per model and task (in the rows' task order). With more
 * than one answer per task the outcome lists every sample; its `verdict` is sample 0's. In-process
 * grading of any sample marks the task.
 */
export function groupVerdicts(rows: readonly VerdictRow[], samples: number): Record<string, GroupedVerdict[]> {
  const out: Record<string, GroupedVerdict[]> = {};
  const index = new Map<string, GroupedVerdict>();
  for (const r of [...rows].sort((a, b) => a.sampleIndex - b.sampleIndex)) {
    const k = `${r.modelKey}\u0000${r.taskId}`;
    let o = index.get(k);
    if (!o) {
      o = { taskId: r.taskId, group: r.group, verdict: r.verdict, isolation: r.isolation };
      if (r.cluster !== undefined) o.cluster = r.cluster;
      if (samples > 1) o.samples = [];
      index.set(k, o);
      (out[r.modelKey] ??= []).push(o);
    }
    o.samples?.push({ index: r.sampleIndex, seed: r.seed, verdict: r.verdict });
    if (r.isolation === "in_process") o.isolation = "in_process";
  }
  for (const xs of Object.values(out)) xs.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
  return out;
}

export type PassAtKTable = { split: "dev" | "test"; modelKey: string; label: string; rows: PassAtK[] };

/** The report's multi-sample section; absent for one answer per task. */
export type SamplesSection = {
  samples: number;
  decoding: { temperature: number; topP: number; seed: number };
  /** pass@k for k in 1, 5, 10 where n allows, per split and model; pass@1 is the mean over samples. */
  passAtK: PassAtKTable[];
  /** Per-task pass-rate changes of the test comparison (treated − base), in 1/n bins. */
  histogram: { comparison: string; bins: HistogramBin[] } | null;
  /** The test comparison's MDE as run next to the projection for one sample per task. */
  mde: SamplesMde | null;
  methods: { passAtK: string; rates: string; mde: string };
};

export const SAMPLES_METHODS = {
  passAtK: `Unbiased pass@k (Chen et al. 2021): per task 1 − C(n−c, k)/C(n, k), averaged over tasks; k ∈ {${REPORTED_KS.join(", ")}} up to the smallest n. pass@1 is the mean over tasks of c/n.`,
  rates:
    "Each task's paired outcome is its pass rate over its n samples; the clustered test and interval run on the per-task rate differences, clustered by source group.",
  mde: SAMPLES_MDE_METHOD,
} as const;

type Side = {
  label: string;
  modelKey: string;
  outcomes: readonly (ScoredOutcome & { taskId: string; group: string })[];
};

export function samplesSection(
  config: ExperimentConfig,
  tables: readonly (Side & { split: "dev" | "test" })[],
  comparison: { label: string; base: Side["outcomes"]; treated: Side["outcomes"] } | null,
  alpha: number,
): SamplesSection | undefined {
  const ev = config.evaluation;
  if (ev.samples === 1) return undefined;
  let histogram: SamplesSection["histogram"] = null;
  let mde: SamplesMde | null = null;
  if (comparison) {
    const treated = new Map(comparison.treated.map((o) => [o.taskId, o]));
    const pairs = comparison.base.flatMap((b) => {
      const t = treated.get(b.taskId);
      return t ? [{ group: b.group, base: sampleCount(b), treated: sampleCount(t) }] : [];
    });
    if (pairs.length) {
      histogram = {
        comparison: comparison.label,
        bins: rateChangeHistogram(
          pairs.map((p) => p.treated.correct / p.treated.samples - p.base.correct / p.base.samples),
          ev.samples,
        ),
      };
      mde = samplesMde(pairs, alpha);
    }
  }
  return {
    samples: ev.samples,
    decoding: { temperature: ev.decoding.temperature, topP: ev.decoding.topP, seed: ev.seed },
    passAtK: tables.map((t) => ({
      split: t.split,
      modelKey: t.modelKey,
      label: t.label,
      rows: passAtKRows(t.outcomes.map(sampleCount)),
    })),
    histogram,
    mde,
    methods: SAMPLES_METHODS,
  };
}
