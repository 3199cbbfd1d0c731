import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type {
  EpisodeBranch,
  EpisodeBranching,
  EpisodeBudget,
  EpisodeJobResult,
  EpisodeRun,
  StateValue,
  TaskSpec,
} from "@agentlab/core";
import type { EnvironmentDeps } from "./deps";
import { RepairEnvironment, type ResumeFrom } from "./environment";
import type { EpisodePolicy } from "./policies";

// An episode to its verdict, then K continuations from each of its branch points (the start and
// every state right after a failed run_public_tests), each rebuilt from the stored state with its
// own seed and run to the judge's verdict. A branch point's pass rate over its continuations is
// its value estimate. Continuations do not branch again.

/** One run: reset (fresh or from a state), the policy's calls until the environment says it is over. */
export async function runEpisode(
  deps: EnvironmentDeps,
  task: TaskSpec,
  budget: EpisodeBudget,
  policy: EpisodePolicy,
  opts: { seed: number; from?: ResumeFrom },
): Promise<{ run: EpisodeRun; env: RepairEnvironment }> {
  const env = new RepairEnvironment(deps, task, budget);
  await env.reset(opts);
  while (!env.done) {
    deps.signal?.throwIfAborted();
    await env.call(await policy.next(env.view()));
  }
  return { run: env.run(), env };
}

export async function runEpisodeWithBranches(
  deps: Omit<EnvironmentDeps, "scratch">,
  scratch: string,
  input: { task: TaskSpec; budget: EpisodeBudget; policy: EpisodePolicy; seed: number; branching: EpisodeBranching },
): Promise<EpisodeJobResult> {
  const dir = mkdtempSync(join(scratch, "episode-"));
  try {
    const full: EnvironmentDeps = { ...deps, scratch: dir, grades: deps.grades ?? new Map() };
    const { task, budget, policy, branching } = input;
    const main = await runEpisode(full, task, budget, policy, { seed: input.seed });
    const transcript = main.env.transcript();
    const branches: EpisodeBranch[] = [];
    const values: StateValue[] = [];
    for (const point of main.run.branchPoints) {
      const state = full.store.states.get(point.state);
      if (!state) throw new Error(`branch point ${point.state} was not stored`);
      let passes = 0;
      for (let i = 0; i < branching.k; i++) {
        const from = { state, transcript: transcript.slice(0, state.t) };
        const { run } = await runEpisode(full, task, budget, policy, { seed: branching.seedBase + i, from });
        if (run.verdict === "pass") passes += 1;
        branches.push({ index: branches.length, run });
      }
      values.push({
        state: state.hash,
        kind: point.kind,
        continuations: branching.k,
        passes,
        passRate: branching.k > 0 ? passes / branching.k : null,
      });
    }
    return {
      policy: { name: policy.name, hash: policy.hash },
      episode: main.run,
      branches,
      states: [...full.store.states.values()],
      values,
      snapshots: Object.fromEntries(full.store.snapshots),
      blobs: Object.fromEntries(full.store.blobs),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
