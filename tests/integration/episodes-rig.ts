import { mkdtempSync, rmSync } from "node:fs";
import {
  DEFAULT_EPISODE_BUDGET,
  parseJobPayload,
  type EpisodeBranching,
  type EpisodeBudget,
  type EpisodeJobResult,
  type EpisodePolicySpec,
  type TaskSpec,
  type ToolCall,
} from "@agentlab/core";
import { schema, type Db } from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import type { EnvironmentDeps } from "../../apps/agent/src/episodes/deps";
import { RepairEnvironment } from "../../apps/agent/src/episodes/environment";
import { scriptedPolicy, type EpisodePolicy } from "../../apps/agent/src/episodes/policies";
import { runEpisodeWithBranches } from "../../apps/agent/src/episodes/runner";
import { episodePayload } from "../../apps/web/server/episodes/enqueue";
import { ContentStore } from "../../apps/agent/src/episodes/store";
import type { SandboxConfig } from "../../apps/agent/src/sandbox/types";
import { sandboxCfg } from "./helpers/judge";

// Shared by the episode tests: the agent's real sandbox and judge (bwrap), a scratch folder per
// test file, and a policy that plays a fixed list of calls (the red team's probes) and then submits.

export type EpisodeRig = {
  deps: (over?: Partial<EnvironmentDeps>) => EnvironmentDeps;
  env: (task: TaskSpec, budget?: Partial<EpisodeBudget>, over?: Partial<EnvironmentDeps>) => RepairEnvironment;
  scratch: string;
  grader: Grader;
  close: () => void;
};

export function episodeRig(cfg: SandboxConfig = sandboxCfg()): EpisodeRig {
  const scratch = mkdtempSync("/tmp/agentlab-episodes-test-");
  const grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5 } });
  const refs = new ReferenceIds(grader);
  const deps = (over: Partial<EnvironmentDeps> = {}): EnvironmentDeps => ({
    sandbox: cfg,
    grader,
    refs,
    scratch,
    store: new ContentStore(),
    isolation: "judge",
    limits: {},
    ...over,
  });
  return {
    deps,
    env: (task, budget = {}, over = {}) =>
      new RepairEnvironment(deps(over), task, { ...DEFAULT_EPISODE_BUDGET, ...budget }),
    scratch,
    grader,
    close: () => {
      grader.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** Plays `calls` in order, then submits. */
export function playPolicy(calls: readonly unknown[]): EpisodePolicy {
  return {
    name: "test:play",
    hash: "0".repeat(64),
    next: async (view) => calls[view.transcript.length] ?? ({ tool: "submit", args: {} } satisfies ToolCall),
  };
}

/** f(x) = x + 1; the shipped file returns x, so the public test fails until it is fixed. */
export function incrementTask(id: string, marker = "no-marker"): TaskSpec {
  return {
    id,
    source_group: id,
    language: "python",
    instruction: "f should return x + 1. Fix it.",
    metadata: {},
    files: [
      { path: "solution.py", role: "main", content: "def f(x):\n    return x\n" },
      { path: "helpers.py", role: "dependency", content: "ONE = 1\n" },
    ],
    public_tests: [
      { path: "test_public.py", content: "from solution import f\n\ndef test_one():\n    assert f(1) == 2\n" },
    ],
    hidden_tests: [
      {
        path: "test_hidden.py",
        content: `SECRET = "${marker}"\nfrom solution import f\n\ndef test_ten():\n    assert f(10) == 11\n`,
      },
    ],
    reference: [{ path: "solution.py", content: `# ${marker}\ndef f(x):\n    return x + 1\n` }],
  };
}

/**
 * Runs an episode job's work as the agent would (its payload from the server's own enqueue code,
 * the policy on this machine's sandbox and judge) and files it as a succeeded job, unstored.
 */
export async function finishedEpisodeJob(
  db: Db,
  rig: EpisodeRig,
  req: { taskRowId: string; policy: EpisodePolicySpec; seed: number; branching?: Partial<EpisodeBranching> },
): Promise<{ jobId: string; payload: unknown; result: EpisodeJobResult }> {
  const parsed = parseJobPayload("episode", await episodePayload(db, req));
  if (!parsed.ok) throw new Error(parsed.error);
  const p = parsed.payload;
  if (p.policy.kind !== "scripted") throw new Error("the rig runs scripted policies");
  const result = await runEpisodeWithBranches(rig.deps(), rig.scratch, {
    task: p.task,
    budget: p.budget,
    policy: p.policy.name === "wrong" ? scriptedPolicy("wrong") : scriptedPolicy(p.policy.name, p.controlReference),
    seed: p.seed,
    branching: p.branching,
  });
  const [job] = await db
    .insert(schema.jobs)
    .values({ type: "episode", payload: p, state: "succeeded", result, finishedAt: new Date() })
    .returning({ id: schema.jobs.id });
  if (!job) throw new Error("no job");
  return { jobId: job.id, payload: p, result };
}
