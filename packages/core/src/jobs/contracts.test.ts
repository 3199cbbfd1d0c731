import { describe, expect, it } from "vitest";
import { ExperimentConfig } from "../experiments/config";
import { GenerateSpec, TrainSpec } from "../trainer/schemas";
import type { TaskSpec } from "../tasks/spec";
import { EnqueueJob, JOB_CONTRACTS, checkJobResult, parseJobPayload, parseJobResult } from "./contracts";
import { JobRequirements } from "./schemas";
import { generateJobPayload, trainJobPayload } from "./recipe";
import { generateJobRequirements, trainJobRequirements } from "./requirements";

const H = (c: string) => c.repeat(64);
const config = ExperimentConfig.parse({
  name: "exp",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/models/tiny", revision: "main" },
  training: {
    epochs: 3,
    learningRate: 1e-4,
    lora: { r: 8, alpha: 16, dropout: 0, targets: ["q_proj"] },
    method: "lora-bf16",
  },
  evaluation: {
    graderVersion: "g1",
    maxNewTokens: 64,
    device: "cuda",
    decoding: { doSample: true, temperature: 0.7, topP: 0.9 },
  },
  seeds: [11, 22],
});
const task: TaskSpec = {
  id: "t/0",
  source_group: "t",
  language: "python",
  instruction: "Fix f.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f():\n    return 0\n" }],
  public_tests: [],
  hidden_tests: [{ path: "test_h.py", content: "def test():\n    pass\n" }],
  reference: [{ path: "solution.py", content: "def f():\n    return 1\n" }],
};

const grpoPayload = {
  splitId: "00000000-0000-4000-8000-000000000001",
  tasks: [{ task, part: "train" }],
  spec: { base_model: "m", max_steps: 4, snapshot_every_steps: 2 },
} as const;

describe("job contracts", () => {
  it("a grpo payload trains on train tasks only, with TRL 1.16's GRPO defaults pinned", () => {
    const ok = parseJobPayload("grpo", grpoPayload);
    expect(ok.ok).toBe(true);
    if (ok.ok)
      expect(ok.payload.spec).toMatchObject({
        learning_rate: 1e-6,
        num_generations: 8,
        beta: 0,
        loss_type: "dapo",
        scale_rewards: "group",
        epsilon: 0.2,
        epsilon_high: 0.28,
        mask_truncated_completions: true,
      });
    for (const part of ["dev", "test"]) {
      const r = parseJobPayload("grpo", { ...grpoPayload, tasks: [{ task, part }] });
      expect(r.ok, part).toBe(false);
      if (!r.ok) expect(r.error).toContain("train tasks only");
    }
    // the trainer's own paths are the agent's: a payload naming one is refused
    expect(parseJobPayload("grpo", { ...grpoPayload, spec: { ...grpoPayload.spec, reward_socket: "/x" } }).ok).toBe(
      false,
    );
  });

  it("refuse unknown keys in every payload; the positive control passes", () => {
    const valid = {
      shell: { argv: ["true"] },
      tokenize: { datasetId: "00000000-0000-4000-8000-000000000003", datasetSha256: H("a"), model: "m" },
      train: trainJobPayload(config, 11, { datasetHash: H("b") }),
      generate: generateJobPayload(config, [task], null),
      grade: { task, candidate: [{ path: "solution.py", content: "x" }] },
      audit: { task },
      dpo: { pairsHash: H("d"), spec: { base_model: "m" } },
      score: {
        pairsHash: H("d"),
        policies: [{ name: "epoch-1", adapterArtifact: H("e"), adapterSha256: H("f") }],
        spec: { base_model: "m" },
      },
      "inspect-model": { model: "Qwen/Qwen2.5-1.5B", revision: "main" },
      "tiny-model": { corpusSha256: H("f"), trainTaskIds: ["t/0"], shape: { hidden_size: 64 } },
      episode: { task, policy: { kind: "scripted", name: "wrong" }, seed: 1 },
      grpo: grpoPayload,
    } as const;
    for (const [type, payload] of Object.entries(valid)) {
      const t = type as keyof typeof valid;
      expect(parseJobPayload(t, payload).ok, type).toBe(true);
      const typo = parseJobPayload(t, { ...payload, datasetHahs: H("c") });
      expect(typo.ok, type).toBe(false);
      if (!typo.ok) expect(typo.error).toContain("datasetHahs");
    }
    // A misspelled trainer key (nested in the spec) is refused too, before it could reach Python.
    const train = trainJobPayload(config, 11, { datasetHash: H("b") });
    expect(parseJobPayload("train", { ...train, spec: { ...train.spec, learning_rat: 1 } }).ok).toBe(false);
    expect(Object.keys(JOB_CONTRACTS).sort()).toEqual([
      "audit",
      "dpo",
      "episode",
      "generate",
      "grade",
      "grade-batch",
      "grpo",
      "inspect-model",
      "score",
      "shell",
      "tiny-model",
      "tokenize",
      "train",
    ]);
  });

  it("a train job needs the dataset's hash; a generate job an adapter's archive with its hash", () => {
    const train = trainJobPayload(config, 11, { datasetHash: H("b") });
    expect(parseJobPayload("train", { ...train, datasetHash: null }).ok).toBe(false);
    const gen = generateJobPayload(config, [task], { sha256: H("d"), artifact: null });
    expect(parseJobPayload("generate", gen).ok).toBe(false);
    expect(
      parseJobPayload("generate", generateJobPayload(config, [task], { sha256: H("d"), artifact: H("e") })).ok,
    ).toBe(true);
  });

  it("EnqueueJob parses the payload by its type", () => {
    expect(EnqueueJob.safeParse({ type: "shell", payload: { argv: ["true"] } }).success).toBe(true);
    expect(EnqueueJob.safeParse({ type: "shell", payload: { argv: ["true"], evn: {} } }).success).toBe(false);
    // The same payload under another type breaks that type's contract.
    expect(EnqueueJob.safeParse({ type: "tokenize", payload: { argv: ["true"] } }).success).toBe(false);
  });

  it("labels follow a charset rule", () => {
    expect(JobRequirements.safeParse({ labels: ["gpu-a100", "eu.west", "zone:1"] }).success).toBe(true);
    for (const bad of ['x"y', "a,b", "{a}", " a", ""])
      expect(JobRequirements.safeParse({ labels: [bad] }).success, bad).toBe(false);
  });

  it("results are read by their type's schema", () => {
    expect(parseJobResult("shell", { outputTruncated: false })).toEqual({ outputTruncated: false });
    expect(parseJobResult("shell", { outputTruncated: "no" })).toBeNull();
    expect(parseJobResult("tokenize", { tokenize: null })).toBeNull();
    const bad = checkJobResult("generate", { outputs: [], summary: null });
    expect(bad.ok).toBe(false);
  });
});

describe("recipe → job specs", () => {
  it("the train spec carries the recipe and the seed, and is a TrainSpec once the agent adds its paths", () => {
    const p = trainJobPayload(config, 22, { datasetHash: H("b") });
    expect(p.spec).toMatchObject({
      base_model: "/models/tiny",
      revision: "main",
      local_files_only: true,
      seed: 22,
      epochs: 3,
      learning_rate: 1e-4,
      method: "lora-bf16",
      lora: { r: 8, alpha: 16, dropout: 0, target_modules: ["q_proj"] },
    });
    expect(TrainSpec.safeParse({ ...p.spec, dataset: "/d.jsonl", output_dir: "/out" }).success).toBe(true);
    expect(trainJobRequirements(config).gpus).toBe(1);
    expect(
      trainJobRequirements(ExperimentConfig.parse({ ...config, training: { ...config.training, method: "lora-fp32" } }))
        .gpus,
    ).toBe(0);
  });

  it("the generate spec takes decoding from the recipe and one prompt per task", () => {
    const p = generateJobPayload(config, [task], { sha256: H("d"), artifact: H("e") });
    expect(p.spec).toMatchObject({
      max_new_tokens: 64,
      do_sample: true,
      temperature: 0.7,
      top_p: 0.9,
      device: "cuda",
      expected_adapter_sha256: H("d"),
      local_files_only: true,
    });
    expect(p.spec.prompts.map((x) => x.task_id)).toEqual(["t/0"]);
    // The prompt shows the buggy file, never the reference.
    expect(JSON.stringify(p.spec.prompts)).toContain("return 0");
    expect(JSON.stringify(p.spec.prompts)).not.toContain("return 1");
    expect(GenerateSpec.safeParse({ ...p.spec, adapter: "/a" }).success).toBe(true);
    expect(generateJobRequirements(config).gpus).toBe(1);
  });
});
