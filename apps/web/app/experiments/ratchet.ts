import { ratchet } from "@agentlab/core/experiments/training";

type StageLike = { key: string; state: string; progress: number };
type WithStages = { stages: StageLike[] };

const hasStages = (v: unknown): v is WithStages =>
  typeof v === "object" && v !== null && Array.isArray((v as { stages?: unknown }).stages);

/**
 * React Query's structuralSharing hook for experiments.byId: each refetch keeps a running stage's
 * progress at least where the previous answer had it, because jobs are added to a stage as it goes
 * (1/1 → 1/41 would draw a bar that runs backwards). A stage that restarts starts over.
 */
export function ratchetStages<T>(old: unknown, next: T): T {
  if (!hasStages(old) || !hasStages(next)) return next;
  const before = new Map(old.stages.map((s) => [s.key, s]));
  const stages = next.stages.map((s) => {
    const prev = before.get(s.key);
    return { ...s, progress: ratchet(prev && { state: prev.state, value: prev.progress }, s.state, s.progress).value };
  });
  return { ...next, stages };
}
