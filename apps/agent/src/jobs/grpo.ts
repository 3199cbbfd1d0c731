import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deriveSeed, mulberry32, publicContext, renderRepairPrompt } from "@agentlab/core";
import type { Grader } from "../grading/grader";
import type { ReferenceIds } from "../grading/reference-ids";
import { runPython } from "../trainer/python";
import { makeGradeBatchHandler } from "./grade-batch";
import { gradeCompletions, serveRewards, shuffleWithinGroups, type RewardStats } from "./grpo-reward";
import { adapterDir, epochUploads, trainerJob } from "./trainer-common";

// `grpo`: online RL (TRL GRPOTrainer, LoRA) whose reward is this agent's isolated judge. The
// trainer gets the train tasks' repair prompts only (rendered here from each task's public
// context, as the policy is asked them at evaluation); the hidden tests stay on this side, in the
// judge. Its reward function sends each batch of completions back over a Unix socket
// (grpo-reward.ts), where they are graded like any grade-batch (and, in the shuffled-reward
// control arm, permuted within each group before they go back). Every snapshot's adapter is
// uploaded as soon as it exists, like train's epochs. Payload and result: core jobs/grpo.ts.

export const grpoJob = (graceMs: number, grading: { grader: Grader; refs: ReferenceIds }) => {
  const gradeBatch = makeGradeBatchHandler(grading.grader, grading.refs);
  return trainerJob("grpo", graceMs, async (ctx, { payload, python }) => {
    if (!ctx.agent.sandboxOk)
      return { reason: "infra_error", error: "sandbox self-test failed on this agent; refusing to grade rewards" };
    const { spec, tasks, startAdapterArtifact, startAdapterSha256 } = payload;
    const byId = new Map(tasks.map((t) => [t.task.id, t]));
    const uploads = epochUploads(ctx, () => ({ trainer: "grpo" }));
    // A Unix socket path is limited to ~107 bytes: a short folder of its own, not the work dir.
    const sockDir = await mkdtemp(join(tmpdir(), "grpo-"));
    const stats: RewardStats = { batches: 0, graded: 0, gradeTimeS: 0 };
    const server = await serveRewards(
      join(sockDir, "reward.sock"),
      async (req) => {
        const verdicts = await gradeCompletions(ctx, gradeBatch, byId, req);
        if (payload.rewardControl !== "shuffle_within_group") return verdicts;
        const random = mulberry32(deriveSeed(spec.seed, req.id));
        return shuffleWithinGroups(verdicts, spec.num_generations, random);
      },
      stats,
    );
    try {
      const prompts = join(ctx.workDir, "grpo-prompts.jsonl");
      const lines = tasks.map((t) =>
        JSON.stringify({
          task_id: t.task.id,
          prompt: renderRepairPrompt(publicContext(t.task, payload.promptVariant)),
        }),
      );
      await writeFile(prompts, `${lines.join("\n")}\n`);
      const start = startAdapterArtifact ? await adapterDir(ctx, startAdapterArtifact) : undefined;
      const result = await runPython(
        "grpo",
        {
          ...spec,
          prompts,
          reward_socket: join(sockDir, "reward.sock"),
          output_dir: join(ctx.workDir, "out"),
          start_adapter: start,
          expected_start_adapter_sha256: startAdapterSha256 ?? null,
        },
        {
          ...python,
          onEvent: (ev) => {
            if (ev.event === "grpo_step") ctx.progress({ ...ev });
            if (ev.event === "artifact") uploads.add(ev);
          },
        },
      );
      await uploads.done();
      const record = result.grpo;
      if (!record) return { reason: "infra_error", error: "trainer returned no grpo run record" };
      ctx.log.info(
        { batches: stats.batches, graded: stats.graded, gradeTimeS: stats.gradeTimeS },
        "grpo rewards graded",
      );
      const snapshots = record.snapshots.map((s) => ({ ...s, artifact: uploads.artifacts.get(s.epoch) ?? null }));
      return { reason: "succeeded", result: { ...record, snapshots } };
    } finally {
      await uploads.settle();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(sockDir, { recursive: true, force: true });
    }
  });
};
