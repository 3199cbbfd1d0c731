import type { Grader } from "../grading/grader";
import type { ReferenceIds } from "../grading/reference-ids";
import { contracted } from "../jobs/contract";
import type { JobHandler } from "../jobs/types";
import type { SandboxConfig } from "../sandbox/types";
import { EpisodeInfraError } from "./deps";
import { scriptedPolicy, type EpisodePolicy } from "./policies";
import { askThroughServer, teacherPolicy } from "./teacher-policy";
import { startLocalPolicy, type LocalPolicyHandle } from "./local-policy";
import { adapterDir } from "../jobs/trainer-common";
import { runEpisodeWithBranches } from "./runner";
import { ContentStore } from "./store";

// `episode` jobs: one policy's episode on a task and its continuations, in the sandbox, graded by
// the agent's judge. Like grading, refused when this agent's sandbox self-test failed. A teacher
// policy asks the server for each turn (teacher-policy.ts); the key never comes here. A local
// model is loaded once per job by the trainer and asked turn by turn (local-policy.ts).

export function makeEpisodeHandler(grading: {
  grader: Grader;
  sandbox: SandboxConfig;
  refs: ReferenceIds;
  /** Milliseconds between SIGTERM and SIGKILL for a local policy's trainer (default 10 s). */
  graceMs?: number;
}): JobHandler {
  return contracted("episode", async (ctx, payload) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to run episodes" };
    const spec = payload.policy;
    let policy: EpisodePolicy;
    let local: LocalPolicyHandle | null = null;
    if (spec.kind === "scripted") policy = scriptedPolicy(spec.name, payload.controlReference ?? []);
    else if (spec.kind === "teacher") {
      if (!ctx.ask)
        return { reason: "infra_error", error: "no channel to the server here: a teacher's turns cannot be asked" };
      policy = teacherPolicy(spec, askThroughServer(ctx.ask, spec));
    } else {
      const python = ctx.agent.python;
      if (!python)
        return { reason: "infra_error", error: "this agent has no Python trainer environment for a local policy" };
      try {
        const adapter = spec.adapterArtifact ? await adapterDir(ctx, spec.adapterArtifact) : undefined;
        local = await startLocalPolicy(spec, {
          adapter,
          python: {
            python,
            signal: ctx.signal,
            graceMs: grading.graceMs ?? 10_000,
            tmpDir: ctx.workDir,
            log: (stream, line) => ctx.emitLog(stream, `${line}\n`),
          },
        });
      } catch (e) {
        if (e instanceof EpisodeInfraError) return { reason: e.reason, error: e.message };
        throw e;
      }
      policy = local.policy;
      ctx.log.info({ model: local.ready.model, adapter: local.ready.adapter_sha256 }, "local policy loaded");
    }
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
    } finally {
      await local?.close();
    }
  });
}
