import type { Grader } from "../grading/grader";
import type { ReferenceIds } from "../grading/reference-ids";
import { contracted } from "../jobs/contract";
import type { JobHandler } from "../jobs/types";
import type { SandboxConfig } from "../sandbox/types";
import { EpisodeInfraError } from "./deps";
import { scriptedPolicy, type EpisodePolicy } from "./policies";
import { askThroughServer, teacherPolicy } from "./teacher-policy";
import { runEpisodeWithBranches } from "./runner";
import { ContentStore } from "./store";

// `episode` jobs: one policy's episode on a task and its continuations, in the sandbox, graded by
// the agent's judge. Like grading, refused when this agent's sandbox self-test failed. A teacher
// policy asks the server for each turn (teacher-policy.ts); the key never comes here.

export function makeEpisodeHandler(grading: {
  grader: Grader;
  sandbox: SandboxConfig;
  refs: ReferenceIds;
}): JobHandler {
  return contracted("episode", async (ctx, payload) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to run episodes" };
    const spec = payload.policy;
    let policy: EpisodePolicy;
    if (spec.kind === "scripted") policy = scriptedPolicy(spec.name, payload.controlReference ?? []);
    else if (ctx.ask) policy = teacherPolicy(spec, askThroughServer(ctx.ask, spec));
    else return { reason: "infra_error", error: "no channel to the server here: a teacher's turns cannot be asked" };
    try {
      const result = await runEpisodeWithBranches(
        {
          sandbox: grading.sandbox,
          grader: grading.grader,
          refs: grading.refs,
          store: new ContentStore(),
          isolation: payload.isolation,
          limits: payload.limits,
          expectedTestIds: payload.expectedTestIds,
          signal: ctx.signal,
        },
        ctx.workDir,
        { task: payload.task, budget: payload.budget, policy, seed: payload.seed, branching: payload.branching },
      );
      ctx.log.info(
        {
          taskId: payload.task.id,
          policy: policy.name,
          verdict: result.episode.verdict,
          turns: result.episode.counters.turns,
          branches: result.branches.length,
        },
        "episode done",
      );
      return { reason: "succeeded", result };
    } catch (e) {
      if (e instanceof EpisodeInfraError) return { reason: e.reason, error: e.message };
      if (ctx.signal.aborted) return { reason: "infra_error", error: "interrupted" };
      throw e;
    }
  });
}
