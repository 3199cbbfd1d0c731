import type { EvaluationWork, Throughput } from "./estimate";

// A running experiment's time left, from the same measured throughput the form's estimate uses:
// the evaluation answers still to generate and grade, and the training still to run (the running
// seeds' own ETA from their trainer, and the seeds not started yet at the duration the finished or
// running ones took). What cannot be estimated is said, never guessed.

export type TrainSeedState = {
  state: "pending" | "running" | "succeeded" | "failed";
  /** The trainer's own ETA of a running seed (null: not reported yet). */
  etaS: number | null;
  /** Wall seconds it ran so far (running) or took (succeeded). */
  elapsedS: number | null;
};

export type RemainingEstimate =
  | { kind: "estimate"; totalS: number; evaluationS: number; trainingS: number; note: string }
  | { kind: "unknown"; reason: string };

export function remainingTime(p: {
  work: EvaluationWork;
  /** Answers stored so far (generated) and with a verdict or given up on (graded), dev and test together. */
  generated: number;
  graded: number;
  throughput: Throughput;
  seeds: readonly TrainSeedState[];
}): RemainingEstimate {
  const t = p.throughput;
  if (t.agents === 0) return { kind: "unknown", reason: "no agent is online" };
  const toGenerate = Math.max(0, p.work.answers - p.generated);
  const toGrade = Math.max(0, p.work.answers - p.graded);
  if ((toGenerate && !t.generate) || (toGrade && !t.grade))
    return { kind: "unknown", reason: "no finished generate or grade job measured yet" };
  const evaluationS =
    (toGenerate * (t.generate?.secondsPerItem ?? 0) + toGrade * (t.grade?.secondsPerItem ?? 0)) / t.agents;
  const running = p.seeds.filter((s) => s.state === "running");
  const pending = p.seeds.filter((s) => s.state === "pending").length;
  if (running.some((s) => s.etaS === null))
    return { kind: "unknown", reason: "a training seed has not reported its ETA yet" };
  // One seed's duration: what finished seeds took, else what a running one will have taken.
  const took = p.seeds.flatMap((s) =>
    s.state === "succeeded" && s.elapsedS !== null
      ? [s.elapsedS]
      : s.state === "running" && s.elapsedS !== null && s.etaS !== null
        ? [s.elapsedS + s.etaS]
        : [],
  );
  if (pending > 0 && took.length === 0)
    return { kind: "unknown", reason: "no training seed has run yet, so its duration is not known" };
  const perSeed = took.length ? took.reduce((a, b) => a + b, 0) / took.length : 0;
  const trainingS = (running.reduce((a, s) => a + (s.etaS ?? 0), 0) + pending * perSeed) / t.agents;
  return {
    kind: "estimate",
    totalS: evaluationS + trainingS,
    evaluationS,
    trainingS,
    note:
      `${toGenerate} answers to generate and ${toGrade} to grade at the measured rates, ` +
      `${running.length} seed${running.length === 1 ? "" : "s"} training and ${pending} to start, ` +
      `shared over ${t.agents} online agent${t.agents === 1 ? "" : "s"}`,
  };
}
