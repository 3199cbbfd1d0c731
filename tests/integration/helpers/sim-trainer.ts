import {
  sha256Hex,
  type GenerateSummary,
  type TaskSpec,
  type TrainerEnvironment,
  type TrainJobResult,
  type TrainMethod,
} from "@agentlab/core";

// The simulated trainer and grader of the experiments harness (../experiments-harness.ts): what a
// real agent's train, generate and grade jobs would report, from fixed rules, so that tests know
// every answer and verdict in advance.

// The simulated trainer names each adapter by its hash; generate jobs carry only the hash (and the artifact).
const adapters = new Map<string, string>();
export function adapterSha(seed: number, epoch: number): string {
  const sha = sha256Hex(`s${seed}e${epoch}`);
  adapters.set(sha, `s${seed}e${epoch}`);
  return sha;
}
/** An adapter the simulated trainer names `name` (a DPO epoch), by its hash. */
export function namedAdapterSha(name: string): string {
  const sha = sha256Hex(`named ${name}`);
  adapters.set(sha, name);
  return sha;
}
export const modelOf = (adapterSha256: unknown): string =>
  typeof adapterSha256 === "string" ? (adapters.get(adapterSha256) ?? "unknown") : "base";

// What the simulated trainer reports: full results of the train and generate contracts (the agent
// checks its results against them before sending, so the server only ever sees complete ones).
export const simEnvironment: TrainerEnvironment = {
  python: "3.11.0",
  platform: "sim",
  torch: "2.13.0",
  cuda: null,
  cuda_available: false,
  driver: null,
  gpus: [],
  transformers: "5.24.0",
  peft: "0.21.2",
  trl: null,
  bitsandbytes: null,
  vllm: null,
  cpu_count: 2,
  torch_threads: 2,
};
export function simRunRecord(seed: number, method: TrainMethod): TrainJobResult {
  const snapshots = [1, 2].map((epoch) => ({
    epoch,
    path: `/adapters/s${seed}/epoch-${epoch}`,
    sha256: adapterSha(seed, epoch),
    files: ["adapter_model.safetensors"],
    train_loss: 1 / epoch,
    eval_loss: null,
    step: epoch,
    artifact: sha256Hex(`archive s${seed}e${epoch}`),
  }));
  const t = "2026-01-01T00:00:00Z";
  return {
    status: "succeeded",
    method,
    device: "cpu",
    config: {},
    dataset_sha256: sha256Hex("ds"),
    eval_dataset_sha256: null,
    chat_template_sha256: sha256Hex("chatml"),
    model: { id: "/models/tiny", path: "/models/tiny", weights_sha256: sha256Hex("tiny weights") },
    seed,
    eot_token: "<|im_end|>",
    samples: 4,
    eval_samples: 0,
    supervised_tokens_per_epoch: 40,
    trainable_parameters: 10,
    total_steps: 2,
    steps: 2,
    epochs_completed: 2,
    snapshots,
    final_train_loss: 0.5,
    final_eval_loss: null,
    started_at: t,
    finished_at: t,
    train_time_s: 1,
    wall_time_s: 1,
    supervised_tokens: 80,
    supervised_tokens_per_s: 80,
    total_tokens_per_s: 100,
    peak_memory_mb: 1,
    environment: simEnvironment,
    pip_freeze: [],
  };
}
type SimDecoding = GenerateSummary["decoding"];
export function simGenerateSummary(
  baseModel: string,
  adapter: string | null,
  decoding: SimDecoding,
  count: number,
): GenerateSummary {
  return {
    backend: "transformers",
    backend_version: "4.57.1",
    dtype: "float32",
    device: "cpu",
    stop: ["<|im_end|>"],
    generation_config: "recipe",
    model: { ref: baseModel, revision: null, weights_sha256: sha256Hex("tiny weights") },
    count,
    base_model: baseModel,
    adapter: null,
    adapter_sha256: adapter,
    decoding,
    chat_template_sha256: sha256Hex("chatml"),
    completion_tokens: count,
    tokens_per_s: 1,
    wall_time_s: 1,
    peak_memory_mb: 1,
    environment: simEnvironment,
  };
}

/** The simulated grader: a pass exactly when the candidate equals the task's reference. */
export function simGrade(task: TaskSpec, cand: { path: string; content: string }[], isolation: unknown) {
  const pass = task.reference.every((r) => cand.find((c) => c.path === r.path)?.content === r.content);
  return {
    // The isolation the payload asked for, echoed as the real grader records it on its result.
    verdict: pass ? "pass" : "fail_hidden",
    backend: "bwrap",
    isolation: isolation === "in_process" ? "in_process" : "judge",
    unsandboxed: false,
    graderVersion: "sim-grader/1",
    reasons: [],
    tests: [
      {
        id: "tests/test_hidden.py::test_fixed",
        layer: "hidden",
        outcome: pass ? "passed" : "failed",
        message: pass ? "" : "AssertionError: wrong answer",
      },
    ],
    ignoredCandidatePaths: [],
    exitCode: pass ? 0 : 1,
    signal: null,
    stdoutTail: pass ? "1 passed" : "1 failed",
    stderrTail: "",
    candidateOutputTail: "",
    wallTimeMs: 1,
    cpuTimeMs: 1,
    peakMemoryKb: 1,
    expectedTestIds: ["tests/test_hidden.py::test_fixed"],
  };
}
