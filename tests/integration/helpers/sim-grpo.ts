import { GrpoJobPayload, sha256Hex, type GrpoJobResult, type GrpoStepMetrics } from "@agentlab/core";
import { modelOf, namedAdapterSha, simEnvironment } from "./sim-trainer";

// The simulated agent's `grpo` job for the experiments harness: one `grpo_step` event per step with
// figures from a fixed rule (reward rising with the step, half the groups without signal, one
// unparseable completion per step: the audit's count), and a snapshot every K steps named
// `grpo-s<seed>k<snapshot>`, which the harness's generate answers as that model.

export type SimGrpoCall = { payload: ReturnType<typeof GrpoJobPayload.parse>; start: string };

/** The figures of step `step` of `total` (what the browser and integration tests expect back). */
export function simGrpoStep(step: number, total: number): GrpoStepMetrics {
  return {
    step,
    total_steps: total,
    loss: 0.5 / step,
    lr: 1e-5,
    reward_mean: step / (total + 1),
    reward_std: 0.25,
    zero_variance_share: 0.5,
    completion_length_mean: 40 + step,
    truncated_share: 0,
    entropy: null,
    kl: null,
    completions: 8,
    masked_groups: 0,
    pass_count: step,
    grades_per_s: 4,
    audit: { tampered: 0, timeout: 0, resource_limit: 0, unparseable: 1, infra_error: 0, flags: [] },
    eta_s: (total - step) * 2,
    memory_mb: 100,
  };
}

export function simGrpo(calls: SimGrpoCall[] = []) {
  return async (
    raw: Record<string, unknown>,
    record: (event: Record<string, unknown>) => Promise<void>,
  ): Promise<GrpoJobResult> => {
    const payload = GrpoJobPayload.parse(raw);
    calls.push({ payload, start: payload.startAdapterSha256 ? modelOf(payload.startAdapterSha256) : "base" });
    const seed = payload.spec.seed ?? 0;
    const total = payload.spec.max_steps;
    const every = payload.spec.snapshot_every_steps;
    const steps = Array.from({ length: total }, (_, i) => simGrpoStep(i + 1, total));
    for (const s of steps) await record({ event: "grpo_step", ...s });
    const t = "2026-01-01T00:00:00Z";
    return {
      status: "succeeded",
      method: "lora-fp32",
      device: "cpu",
      config: {},
      prompts_sha256: sha256Hex(payload.tasks.map((t) => t.task.id).join(",")),
      prompt_count: payload.tasks.length,
      model: { id: "/models/tiny", path: "/models/tiny", weights_sha256: sha256Hex("tiny weights") },
      start_adapter_sha256: payload.startAdapterSha256 ?? null,
      seed,
      trl: "1.16.0",
      trainable_parameters: 10,
      total_steps: total,
      steps: total,
      step_metrics: steps,
      snapshots: steps
        .filter((s) => s.step % every === 0)
        .map((s, i) => {
          const name = `grpo-s${seed}k${i + 1}`;
          return {
            epoch: i + 1,
            path: `/adapters/${name}`,
            sha256: namedAdapterSha(name),
            files: ["adapter_model.safetensors"],
            train_loss: s.loss,
            eval_loss: null,
            step: s.step,
            reward_mean: s.reward_mean,
            artifact: sha256Hex(`archive ${name}`),
          };
        }),
      masked_groups: 0,
      graded_completions: 8 * total,
      started_at: t,
      finished_at: t,
      train_time_s: 1,
      wall_time_s: 1,
      grade_time_s: 1,
      peak_memory_mb: 1,
      environment: simEnvironment,
      pip_freeze: [],
    };
  };
}
