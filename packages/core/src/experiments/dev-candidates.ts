import { dpoRecipeOf, grpoRecipeOf, type ExperimentConfig } from "./config";
import { modelKey, type DevCandidate } from "./selection";

// The dev pass counts selection compares (selectByDev), from the stored dev verdicts. Pure, so the
// selection stage only reads rows and this decides what counts.

export type DevVerdictRow = { modelKey: string; taskId: string; verdict: string };

/**
 * One candidate per model with dev verdicts, over the dev tasks that hold a verdict for every
 * candidate: a task in `noVerdictTaskIds` (grading failed for at least one model) is left out for
 * all of them, so no infra error reads as a model failure. Order: the base, then each seed in
 * config order, epochs ascending, then (sft+dpo) each round's DPO epochs per seed, (sft+grpo) each
 * seed's GRPO snapshots (one per K steps and the last: ceil(steps / K)); models without
 * verdicts are absent.
 */
export function devCandidates(
  rows: readonly DevVerdictRow[],
  noVerdictTaskIds: ReadonlySet<string>,
  config: Pick<ExperimentConfig, "seeds" | "method" | "dpo" | "grpo"> & {
    training: Pick<ExperimentConfig["training"], "epochs">;
  },
): DevCandidate[] {
  const counts = new Map<string, { n: number; passed: number }>();
  for (const r of rows) {
    if (noVerdictTaskIds.has(r.taskId)) continue;
    const c = counts.get(r.modelKey) ?? { n: 0, passed: 0 };
    c.n += 1;
    c.passed += r.verdict === "pass" ? 1 : 0;
    counts.set(r.modelKey, c);
  }
  const out: DevCandidate[] = [];
  const base = counts.get("base");
  if (base) out.push({ ref: { model: "base" }, ...base });
  config.seeds.forEach((seed, seedIndex) => {
    for (let epoch = 1; epoch <= config.training.epochs; epoch++) {
      const c = counts.get(modelKey({ model: "adapter", seed, seedIndex, epoch }));
      if (c) out.push({ ref: { model: "adapter", seed, seedIndex, epoch }, ...c });
    }
  });
  const dpo = dpoRecipeOf({ method: config.method, dpo: config.dpo }); // rounds and epochs only
  for (let round = 1; round <= (dpo?.rounds ?? 0); round++)
    config.seeds.forEach((seed, seedIndex) => {
      for (let epoch = 1; epoch <= (dpo?.epochs ?? 0); epoch++) {
        const ref = {
          model: "dpo" as const,
          seed,
          seedIndex,
          round,
          epoch,
          ...(config.method === "sft+rft" ? { objective: "rft" as const } : {}),
        };
        const c = counts.get(modelKey(ref));
        if (c) out.push({ ref, ...c });
      }
    });
  const grpo = grpoRecipeOf({ method: config.method, grpo: config.grpo });
  const snapshots = grpo ? Math.ceil(grpo.steps / grpo.snapshotEverySteps) : 0;
  config.seeds.forEach((seed, seedIndex) => {
    for (let epoch = 1; epoch <= snapshots; epoch++) {
      const ref = { model: "grpo" as const, seed, seedIndex, epoch };
      const c = counts.get(modelKey(ref));
      if (c) out.push({ ref, ...c });
    }
  });
  return out;
}
